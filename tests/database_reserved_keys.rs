//! The reserved prefix `__zarrdb/` (the format marker) is out of the user's reach on every store
//! of a database — auto-commit, transaction and snapshot: reads and writes of keys under it are
//! `StoreError::InvalidKey` (or `Unsupported` for writes to a snapshot), and listings never show
//! it; the marker is byte for byte what it was (read back through the engine's own crate).

use std::sync::Arc;

use zarrdb::error::StoreError;
use zarrdb::store::ByteRange;
use zarrdb::{Group, Store};

#[path = "common/raw_marker.rs"]
mod raw_marker;
use raw_marker::{raw_marker, MARKER};
#[path = "common/reserved_fixture.rs"]
mod reserved_fixture;
use reserved_fixture::{fresh, invalid, open, ALL, USER_KEYS};

/// A write refused as it should be: `InvalidKey`, or `Unsupported` from a read-only store.
fn refused(result: Result<(), StoreError>, writable: bool) -> bool {
    match result {
        Err(StoreError::InvalidKey { .. }) => true,
        Err(StoreError::Unsupported { .. }) => !writable,
        _ => false,
    }
}

fn refuses_reserved_keys(store: &Arc<dyn Store>, writable: bool) {
    for key in [MARKER, "__zarrdb/other", "__zarrdb/a/b"] {
        assert!(invalid(store.get(key)), "get {key}");
        assert!(invalid(store.size(key)), "size {key}");
        assert!(invalid(store.get_partial_values(&[("b", ByteRange::Suffix(1)), (key, ByteRange::Suffix(1))])));
        assert!(refused(store.set(key, b"{\"zarrdb_format\":2}"), writable), "set {key}");
        assert!(refused(store.set_partial_values(&[("b", 0, b"x"), (key, 0, b"x")]), writable), "partial {key}");
        assert!(refused(store.erase(key), writable), "erase {key}");
        assert!(refused(store.erase_values(&[key]), writable), "erase_values {key}");
    }
    assert_eq!(store.get("b").unwrap().as_deref(), Some(&b"b"[..]), "user keys untouched");
}

/// No listing shows the reserved prefix.
fn hides_reserved_keys(store: &Arc<dyn Store>) {
    assert_eq!(store.list().unwrap(), USER_KEYS);
    assert_eq!(store.list_prefix("").unwrap(), USER_KEYS);
    assert_eq!(store.list_prefix("_").unwrap(), vec!["_tmp/x"]);
    assert!(store.list_prefix("__").unwrap().is_empty());
    assert!(store.list_prefix("__zarrdb/").unwrap().is_empty());
    let root = store.list_dir("").unwrap();
    assert_eq!(
        (root.keys, root.prefixes),
        (vec!["b".to_owned(), "zarr.json".to_owned()], vec!["_tmp".into(), "a".into()])
    );
    assert_eq!(store.list_dir("__zarrdb/").unwrap(), Default::default());
    assert_eq!(Group::open(store.clone(), "/").unwrap().child_names().unwrap(), vec!["_tmp", "a"]);
}

#[test]
fn reserved_keys_are_refused_and_hidden_on_every_store() {
    let dir = tempfile::tempdir().unwrap();
    for backend in ALL {
        let (path, marker) = fresh(backend, dir.path());
        let db = open(backend, &path);
        let snapshot = db.begin_read().unwrap();
        refuses_reserved_keys(&db.store(), true);
        refuses_reserved_keys(&snapshot.store(), false);
        hides_reserved_keys(&db.store());
        hides_reserved_keys(&snapshot.store());
        let txn = db.begin_write().unwrap();
        refuses_reserved_keys(&txn.store(), true);
        hides_reserved_keys(&txn.store());
        txn.commit().unwrap();
        drop((snapshot, db));
        assert_eq!(raw_marker(backend, &path), Some(marker), "{}", backend.name());
    }
}
