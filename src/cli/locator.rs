//! Store locators (DESIGN.md §11): `dir:PATH`, `zip:PATH`, `redb:PATH`, `lmdb:PATH`, `sled:PATH`,
//! or a bare path whose form decides: `*.zip` is a zip, a folder is a directory store (or an LMDB
//! or sled database when it holds one), any other path a redb file.

use std::path::Path;
use std::sync::Arc;

use zarrdb::{Backend, Database, DirectoryStore, Store, ZipStore};

use super::CliError;

/// What a locator names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Directory,
    Zip,
    Database(Backend),
}

/// Split a locator into its kind and path, looking at the path when no scheme is given.
pub(crate) fn parse(locator: &str) -> (Kind, &str) {
    if let Some((scheme, path)) = locator.split_once(':') {
        match scheme {
            "dir" => return (Kind::Directory, path),
            "zip" => return (Kind::Zip, path),
            "redb" => return (Kind::Database(Backend::Redb), path),
            "lmdb" => return (Kind::Database(Backend::Lmdb), path),
            "sled" => return (Kind::Database(Backend::Sled), path),
            _ => {}
        }
    }
    let path = Path::new(locator);
    let kind = if locator.ends_with(".zip") {
        Kind::Zip
    } else if path.join("zarr.json").is_file() {
        // A Zarr folder may hold nodes named like engine files; no engine writes a zarr.json.
        Kind::Directory
    } else if path.join("data.mdb").is_file() {
        Kind::Database(Backend::Lmdb)
    } else if path.join("conf").is_file() && path.join("db").is_file() {
        Kind::Database(Backend::Sled)
    } else if path.is_dir() {
        Kind::Directory
    } else {
        Kind::Database(Backend::Redb)
    };
    (kind, locator)
}

/// An opened store, with the database it reads from kept open.
pub(crate) struct Opened {
    pub store: Arc<dyn Store>,
    _database: Option<Database>,
}

/// Open the store a locator names, for reading: databases are read through one snapshot, so a
/// command sees one consistent state while writers go on.
pub(crate) fn open(locator: &str) -> Result<Opened, CliError> {
    open_with(locator, false)
}

/// [`open`], verifying every page of a redb file first when `verify` (for `zarrdb check`).
pub(crate) fn open_with(locator: &str, verify: bool) -> Result<Opened, CliError> {
    match parse(locator) {
        (Kind::Directory, path) => Ok(Opened { store: Arc::new(DirectoryStore::open(path)?), _database: None }),
        (Kind::Zip, path) => Ok(Opened { store: Arc::new(ZipStore::open(path)?), _database: None }),
        (Kind::Database(backend), path) => {
            let database = Database::builder().backend(backend).verify_on_open(verify).open(path)?;
            let store = database.begin_read()?.store();
            Ok(Opened { store, _database: Some(database) })
        }
    }
}
