//! A bulk write on a database with history holds its last window of values back until the next
//! window, an erase or the commit (`store/history/mod.rs`, `HistoryBulk`): every put and erase
//! still reaches the engine in the order given, on every backend. Keys put and erased, set twice
//! within one window and across windows, and superseded large values whose object keys the bulk
//! write itself drops, read back as the last operation left them, in the head and in the
//! version before.

use crate::db::{Backend, VersionRef};
use crate::store::history::MAIN;
use crate::Database;

/// A value stored under its object key once a commit supersedes it (longer than history keeps
/// in an entry).
fn large(tag: u8) -> Vec<u8> {
    (0..10_000u32).map(|i| (i as u8) ^ tag).collect()
}

/// The object keys of the database's values (history's own keys).
fn object_keys(db: &Database) -> Vec<String> {
    let history = db.shared.history.as_ref().expect("a database with history");
    let snap = history.raw_snapshot().unwrap();
    snap.keys(&crate::store::history::objects_prefix()).unwrap()
}

fn scenario(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder().backend(backend).history(true).create(dir.path().join("b.zarrdb")).unwrap();
    let txn = db.begin_write().unwrap();
    for key in ["a/c/0", "a/c/1", "a/c/2", "a/c/3"] {
        txn.store().set(key, &large(1)).unwrap();
    }
    txn.commit().unwrap();
    let before = db.resolve(&VersionRef::Branch(MAIN.into())).unwrap().id;
    let objects_before = object_keys(&db);

    let mut bulk = db.begin_bulk(0).unwrap();
    // Put, then erased by the next call: the erase must not overtake the held put.
    bulk.put(vec![("n/c/0".into(), b"new".to_vec())]).unwrap();
    bulk.erase("n/c/0").unwrap();
    // Set twice in one window: the first large value superseded a stored one, went under its
    // object key, and is dropped by the second within the window held back.
    bulk.put(vec![("a/c/0".into(), large(2)), ("a/c/0".into(), large(3))]).unwrap();
    // Set twice across windows.
    bulk.put(vec![("a/c/1".into(), large(4))]).unwrap();
    bulk.put(vec![("a/c/1".into(), large(5)), ("n/c/1".into(), b"one".to_vec())]).unwrap();
    // Erased after its put in the window before, then put again in the last window.
    bulk.put(vec![("a/c/2".into(), large(6))]).unwrap();
    bulk.erase("a/c/2").unwrap();
    bulk.erase("a/c/3").unwrap();
    bulk.put(vec![("a/c/2".into(), large(7))]).unwrap();
    bulk.commit().unwrap();

    let head = db.store();
    assert_eq!(head.get("n/c/0").unwrap(), None, "{backend:?}: put then erased");
    assert_eq!(head.get("a/c/0").unwrap(), Some(large(3)), "{backend:?}: the second of one window");
    assert_eq!(head.get("a/c/1").unwrap(), Some(large(5)), "{backend:?}: the later window's");
    assert_eq!(head.get("n/c/1").unwrap(), Some(b"one".to_vec()), "{backend:?}");
    assert_eq!(head.get("a/c/2").unwrap(), Some(large(7)), "{backend:?}: put again after its erase");
    assert_eq!(head.get("a/c/3").unwrap(), None, "{backend:?}: erased");

    let old = db.open_version(&VersionRef::Commit(before)).unwrap().store();
    for key in ["a/c/0", "a/c/1", "a/c/2", "a/c/3"] {
        assert_eq!(old.get(key).unwrap(), Some(large(1)), "{backend:?}: {key} in the version before");
    }
    assert_eq!(old.get("n/c/1").unwrap(), None, "{backend:?}");

    // Under object keys now: the four values of the base the bulk write superseded (kept for the
    // version before), and the three large values the head holds that superseded one (a/c/0,
    // a/c/1, a/c/2). The values the bulk write replaced itself (a/c/0's and a/c/1's first, a/c/2's
    // before its erase) left none behind.
    let objects = object_keys(&db);
    let new: Vec<_> = objects.iter().filter(|k| !objects_before.contains(k)).collect();
    assert_eq!(new.len(), 7, "{backend:?}: found {new:?}");
    assert!(db.check_history().unwrap().is_empty(), "{backend:?}");
    let diff = db.diff(&VersionRef::Commit(before), &VersionRef::Branch(MAIN.into())).unwrap();
    let keys: Vec<_> = diff.iter().map(|change| change.key.as_str()).collect();
    assert_eq!(keys, ["a/c/0", "a/c/1", "a/c/2", "a/c/3", "n/c/1"], "{backend:?}");
}

#[test]
fn a_bulk_write_s_puts_and_erases_keep_their_order_with_history() {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        scenario(backend);
    }
}
