//! Erasing by prefix never reaches the reserved prefix `__zarrdb/` (the format marker): erasing
//! everything (`erase_prefix("")`, through a transaction or the auto-commit store) removes every
//! user key, keeps the marker byte for byte, and the database reopens; erasing any other prefix
//! removes exactly the user keys that start with it — including prefixes that look like the
//! reserved one (`_`, `__`, `__zarrdb/`, `__zarrdb/format`).

#[path = "common/raw_marker.rs"]
mod raw_marker;
use raw_marker::raw_marker;
#[path = "common/reserved_fixture.rs"]
mod reserved_fixture;
use reserved_fixture::{fresh, invalid, open, ALL, USER_KEYS};

#[test]
fn erasing_everything_keeps_the_marker() {
    let dir = tempfile::tempdir().unwrap();
    for backend in ALL {
        let (path, marker) = fresh(backend, dir.path());
        let db = open(backend, &path);
        let txn = db.begin_write().unwrap();
        txn.store().erase_prefix("").unwrap();
        assert!(txn.store().list().unwrap().is_empty(), "{}", backend.name());
        txn.store().set("after/zarr.json", b"{}").unwrap(); // a put after erasing everything stays
        txn.commit().unwrap();
        assert_eq!(db.store().list().unwrap(), vec!["after/zarr.json"], "{}", backend.name());
        // The same through the auto-commit store.
        db.store().erase_prefix("").unwrap();
        assert!(db.store().list().unwrap().is_empty(), "{}", backend.name());
        drop(db);
        assert_eq!(raw_marker(backend, &path), Some(marker), "{}", backend.name());
        assert!(open(backend, &path).store().list().unwrap().is_empty());
    }
}

/// Erase `prefix` in a transaction; only the user keys starting with it may go, never the marker.
fn erase_prefix_spares_others(prefix: &str) {
    let dir = tempfile::tempdir().unwrap();
    for backend in ALL {
        let (path, marker) = fresh(backend, dir.path());
        let db = open(backend, &path);
        let txn = db.begin_write().unwrap();
        let result = txn.store().erase_prefix(prefix);
        assert!(result.is_ok() || invalid(result), "{}", backend.name());
        txn.commit().unwrap();
        let want: Vec<&str> = USER_KEYS.into_iter().filter(|k| !k.starts_with(prefix)).collect();
        assert_eq!(db.store().list().unwrap(), want, "{} erase_prefix({prefix:?})", backend.name());
        drop(db);
        assert_eq!(raw_marker(backend, &path), Some(marker), "{} erase_prefix({prefix:?})", backend.name());
    }
}

#[test]
fn erasing_an_ordinary_prefix_keeps_the_rest() {
    erase_prefix_spares_others("a/");
    erase_prefix_spares_others("zarr");
}

#[test]
fn erasing_an_underscore_prefix_keeps_other_keys() {
    erase_prefix_spares_others("_");
    erase_prefix_spares_others("__");
}

#[test]
fn erasing_the_reserved_prefix_erases_nothing() {
    erase_prefix_spares_others("__zarrdb/");
}

#[test]
fn erasing_a_prefix_inside_the_reserved_prefix_keeps_the_marker() {
    erase_prefix_spares_others("__zarrdb/format");
    erase_prefix_spares_others("__zarrdb/f");
}
