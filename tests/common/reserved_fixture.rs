//! The databases the reserved-prefix tests start from: every backend, holding a few user keys
//! (some of which look like the reserved prefix). Included with `#[path]`, beside `raw_marker.rs`.

use std::path::{Path, PathBuf};

use super::raw_marker::raw_marker;
use zarrdb::error::StoreError;
use zarrdb::{Backend, Database, Durability};

pub const ALL: [Backend; 3] = [Backend::Redb, Backend::Lmdb, Backend::Sled];
pub const USER_KEYS: [&str; 5] = ["_tmp/x", "a/b/c/0", "a/zarr.json", "b", "zarr.json"];

/// A database holding `USER_KEYS`; its path and the marker it was created with.
pub fn fresh(backend: Backend, dir: &Path) -> (PathBuf, Vec<u8>) {
    let path = dir.join(backend.name());
    drop(Database::builder().backend(backend).create(&path).unwrap());
    let marker = raw_marker(backend, &path).expect("a new database has a marker");
    let db = open(backend, &path);
    for key in USER_KEYS {
        let group = br#"{"zarr_format":3,"node_type":"group"}"#;
        db.store().set(key, if key.ends_with("zarr.json") { group } else { key.as_bytes() }).unwrap();
    }
    (path, marker)
}

pub fn open(backend: Backend, path: &Path) -> Database {
    Database::builder().backend(backend).durability(Durability::Fast).open(path).unwrap()
}

/// Whether `result` is the refusal of a reserved or malformed key.
pub fn invalid<T: std::fmt::Debug>(result: Result<T, StoreError>) -> bool {
    matches!(result, Err(StoreError::InvalidKey { .. }))
}
