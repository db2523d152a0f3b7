//! The format marker `__zarrdb/format`: a database whose marker names another format version is
//! refused with `OpenError::FormatVersion` on every backend (the marker is rewritten here through
//! each engine's own crate), with a one-line message naming the path and the version found; a
//! database whose marker was removed gets it back and opens.

use std::path::Path;

use zarrdb::error::OpenError;
use zarrdb::{Backend, Database, Error};

#[path = "common/raw_marker.rs"]
mod raw_marker;
use raw_marker::swap_marker;

fn database(backend: Backend, path: &Path) -> Result<Database, Error> {
    Database::builder().backend(backend).open(path)
}

fn fresh(backend: Backend, dir: &Path) -> std::path::PathBuf {
    let path = dir.join(backend.name());
    let db = Database::builder().backend(backend).create(&path).unwrap();
    db.store().set("zarr.json", br#"{"zarr_format":3,"node_type":"group"}"#).unwrap();
    path
}

#[test]
fn another_format_version_is_refused_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let path = fresh(backend, dir.path());
        let original = swap_marker(backend, &path, Some(br#"{"zarrdb_format":2}"#));
        assert_eq!(original.as_deref(), Some(&br#"{"zarrdb_format":1}"#[..]), "{}", backend.name());
        for attempt in 0..2 {
            let error = database(backend, &path).expect_err("format 2 opened");
            let text = error.to_string();
            assert!(!text.contains('\n') && text.contains(&path.display().to_string()), "{text:?}");
            match error {
                Error::Open(OpenError::FormatVersion { found, supported, .. }) => {
                    assert!(found.contains('2'), "{found}");
                    assert_eq!(supported, 1);
                }
                other => panic!("{} attempt {attempt}: {other:?}", backend.name()),
            }
        }
        // Refusing did not rewrite the marker; putting format 1 back makes it open again.
        let found = swap_marker(backend, &path, original.as_deref());
        assert_eq!(found.as_deref(), Some(&br#"{"zarrdb_format":2}"#[..]));
        let db = database(backend, &path).unwrap();
        assert!(db.store().get("zarr.json").unwrap().is_some(), "{}", backend.name());
    }
}

#[test]
fn a_missing_marker_is_written_again() {
    let dir = tempfile::tempdir().unwrap();
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let path = fresh(backend, dir.path());
        let original = swap_marker(backend, &path, None).expect("a new database has a marker");
        let db = database(backend, &path).unwrap();
        assert!(db.store().get("zarr.json").unwrap().is_some(), "{}", backend.name());
        drop(db);
        assert_eq!(swap_marker(backend, &path, None), Some(original), "{}: marker written back", backend.name());
    }
}

#[test]
fn a_multi_line_marker_still_gives_a_one_line_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(Backend::Redb, dir.path());
    swap_marker(Backend::Redb, &path, Some(b"{\n  \"zarrdb_format\": 2\n}"));
    let error = database(Backend::Redb, &path).expect_err("format 2 opened");
    assert!(matches!(error, Error::Open(OpenError::FormatVersion { .. })), "{error:?}");
    assert!(!error.to_string().contains('\n'), "{:?}", error.to_string());
}
