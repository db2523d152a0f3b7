//! The sled database the sled log tests start from, and their read-only open. Included with
//! `#[path]`.

use std::path::Path;

use zarrdb::{Backend, Database, Error};

pub const COMMITS: usize = 200;

/// A sled database at `path` holding `COMMITS` values under `a/`, one commit each.
pub fn build(path: &Path) {
    let db = Database::builder().backend(Backend::Sled).create(path).unwrap();
    let store = db.store();
    for i in 0..COMMITS {
        store.set(&format!("a/c/{i}"), &vec![i as u8; 2_000]).unwrap();
    }
}

/// How many values under `a/` the database at `path` holds, opened read-only.
pub fn open(path: &Path) -> Result<usize, Error> {
    let db = Database::builder().backend(Backend::Sled).read_only(true).open(path)?;
    Ok(db.store().list_prefix("a/")?.len())
}
