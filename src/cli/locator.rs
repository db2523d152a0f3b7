//! Store locators (DESIGN.md §11): `dir:PATH`, `zip:PATH`, `redb:PATH`, `lmdb:PATH`, `sled:PATH`,
//! or a bare path whose form decides.

use std::path::Path;
use std::sync::Arc;

use zarrdb::{DirectoryStore, Store};

use super::CliError;

/// Open the store a locator names.
pub(crate) fn open(locator: &str) -> Result<Arc<dyn Store>, CliError> {
    let (scheme, path) = match locator.split_once(':') {
        Some((scheme @ ("dir" | "zip" | "redb" | "lmdb" | "sled"), path)) => (scheme, path),
        _ if locator.ends_with(".zip") => ("zip", locator),
        _ if Path::new(locator).is_dir() => ("dir", locator),
        _ if !Path::new(locator).exists() => {
            return Err(CliError(format!("no store at \"{locator}\": no such file or directory")))
        }
        _ => ("redb", locator),
    };
    match scheme {
        "dir" => Ok(Arc::new(DirectoryStore::open(path)?)),
        other => Err(CliError(format!("store \"{locator}\": the {other} backend is not available in this build yet"))),
    }
}
