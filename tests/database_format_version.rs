//! The format record `__zarrdb/format` (docs/format.md, "Formats"): a database of a newer format
//! is refused with `OpenError::NewerFormat` on every backend, writable or read-only (the record is
//! rewritten here through each engine's own crate), with one line naming the path, the zarrdb
//! that wrote it and both numbers; an older record is read as it is by a read-only open and
//! upgraded by a writable one; a database whose record was removed gets it back and opens.

use std::path::Path;

use zarrdb::error::OpenError;
use zarrdb::{Backend, Database, Error};

#[path = "common/raw_marker.rs"]
mod raw_marker;
use raw_marker::{raw_marker, swap_marker};

fn database(backend: Backend, path: &Path) -> Result<Database, Error> {
    Database::builder().backend(backend).open(path)
}

fn fresh(backend: Backend, dir: &Path) -> std::path::PathBuf {
    let path = dir.join(backend.name());
    let db = Database::builder().backend(backend).create(&path).unwrap();
    db.store().set("zarr.json", br#"{"zarr_format":3,"node_type":"group"}"#).unwrap();
    path
}

/// The record this build writes.
fn current() -> Vec<u8> {
    format!(r#"{{"zarrdb_format":5,"zarrdb_version":"{}"}}"#, env!("CARGO_PKG_VERSION")).into_bytes()
}

#[test]
fn a_newer_format_is_refused_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let path = fresh(backend, dir.path());
        let original = swap_marker(backend, &path, Some(br#"{"zarrdb_format":7,"zarrdb_version":"9.1.0"}"#));
        assert_eq!(original, Some(current()), "{}", backend.name());
        for read_only in [false, true, false] {
            let error =
                Database::builder().backend(backend).read_only(read_only).open(&path).expect_err("format 7 opened");
            assert_eq!(
                error.to_string(),
                format!(
                    "cannot open \"{}\": written by zarrdb 9.1.0, format 7; this build reads up to 6",
                    path.display()
                )
            );
            match error {
                Error::Open(OpenError::NewerFormat { path: at, found, supported, written_by }) => {
                    assert_eq!(
                        (at, found, supported, written_by.as_str()),
                        (path.display().to_string(), 7, 6, "9.1.0")
                    );
                }
                other => panic!("{} read_only {read_only}: {other:?}", backend.name()),
            }
        }
        // Refusing did not rewrite the record; putting the current one back makes it open again.
        let found = swap_marker(backend, &path, original.as_deref());
        assert_eq!(found.as_deref(), Some(&br#"{"zarrdb_format":7,"zarrdb_version":"9.1.0"}"#[..]));
        let db = database(backend, &path).unwrap();
        assert!(db.store().get("zarr.json").unwrap().is_some(), "{}", backend.name());
    }
}

#[test]
fn an_older_record_is_read_as_it_is_and_upgraded_by_a_writable_open() {
    let dir = tempfile::tempdir().unwrap();
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let path = fresh(backend, dir.path());
        swap_marker(backend, &path, Some(br#"{"zarrdb_format":1}"#));
        let db = Database::builder().backend(backend).read_only(true).open(&path).unwrap();
        assert!(db.store().get("zarr.json").unwrap().is_some(), "{}", backend.name());
        drop(db);
        assert_eq!(raw_marker(backend, &path).as_deref(), Some(&br#"{"zarrdb_format":1}"#[..]), "{}", backend.name());
        drop(database(backend, &path).unwrap());
        assert_eq!(raw_marker(backend, &path), Some(current()), "{}: upgraded", backend.name());
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
fn a_multi_line_record_still_gives_a_one_line_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(Backend::Redb, dir.path());
    swap_marker(Backend::Redb, &path, Some(b"{\n  \"zarrdb_format\": 7\n}"));
    let error = database(Backend::Redb, &path).expect_err("format 7 opened");
    assert!(matches!(error, Error::Open(OpenError::NewerFormat { .. })), "{error:?}");
    assert!(error
        .to_string()
        .ends_with("written by zarrdb (version not recorded), format 7; this build reads up to 6"));
    swap_marker(Backend::Redb, &path, Some(b"zarrdb\nformat 2"));
    let error = database(Backend::Redb, &path).expect_err("an unknown record opened");
    assert!(matches!(error, Error::Open(OpenError::FormatVersion { .. })), "{error:?}");
    assert!(!error.to_string().contains('\n'), "{:?}", error.to_string());
}
