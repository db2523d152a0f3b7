//! What is committed survives closing and reopening, on every backend and in both durability
//! modes: groups with attributes, arrays created on the auto-commit store and inside a
//! transaction, their regions; an aborted transaction leaves nothing. Fast-mode commits (which
//! redb keeps off the disk until a durable commit) survive a clean close, including the last of
//! many small commits and commits made while a snapshot was open.

use serde_json::json;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Durability, Group};

const ALL: [Backend; 3] = [Backend::Redb, Backend::Lmdb, Backend::Sled];

fn open(backend: Backend, durability: Durability, path: &std::path::Path, create: bool) -> Database {
    let mut b = Database::builder();
    b.backend(backend).durability(durability);
    if create { b.create(path) } else { b.open(path) }.unwrap()
}

fn attrs(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    value.as_object().unwrap().clone()
}

/// 10x10 int32 values that differ everywhere and differ between `seed`s.
fn grid(seed: i32) -> Vec<i32> {
    (0..100).map(|i| i * 7 + seed).collect()
}

/// Write the hierarchy the reopen tests check.
fn populate(db: &Database) {
    Group::create(db.store(), "/runs", attrs(json!({"owner": "lab", "n": 2}))).unwrap();
    let a =
        Array::create(db.store(), "/runs/a", ArrayMetadata::new(DataType::Int32, vec![10, 10], vec![4, 4])).unwrap();
    a.write_region(&[0, 0], &[10, 10], &grid(1)).unwrap();
    a.write_region(&[3, 3], &[2, 2], &[-1, -2, -3, -4]).unwrap();

    let txn = db.begin_write().unwrap();
    let b = Array::create(txn.store(), "/runs/b", ArrayMetadata::new(DataType::Float64, vec![7], vec![3])).unwrap();
    b.write_region(&[1], &[5], &[0.5, 1.5, 2.5, 3.5, 4.5]).unwrap();
    Group::create(txn.store(), "/other", Default::default()).unwrap();
    txn.commit().unwrap();

    let aborted = db.begin_write().unwrap();
    Array::create(aborted.store(), "/runs/c", ArrayMetadata::new(DataType::UInt8, vec![2], vec![2])).unwrap();
    Group::create(aborted.store(), "/gone", Default::default()).unwrap();
    drop(aborted);
}

/// Check everything `populate` committed, and nothing it aborted.
fn verify(db: &Database, what: &str) {
    let root = Group::open(db.store(), "/").unwrap();
    assert!(!root.is_implicit(), "{what}");
    assert_eq!(root.child_names().unwrap(), vec!["other", "runs"], "{what}");
    let runs = Group::open(db.store(), "/runs").unwrap();
    assert_eq!(runs.attributes(), attrs(json!({"owner": "lab", "n": 2})), "{what}");
    assert_eq!(runs.child_names().unwrap(), vec!["a", "b"], "{what}");

    let mut want = grid(1);
    for (i, v) in [(33, -1), (34, -2), (43, -3), (44, -4)] {
        want[i] = v;
    }
    let a = Array::open(db.store(), "/runs/a").unwrap();
    assert_eq!(a.read_all::<i32>().unwrap(), want, "{what}");
    let b = Array::open(db.store(), "/runs/b").unwrap();
    assert_eq!(b.read_all::<f64>().unwrap(), vec![0.0, 0.5, 1.5, 2.5, 3.5, 4.5, 0.0], "{what}");
    assert!(!Group::open(db.store(), "/other").unwrap().is_implicit(), "{what}");
    assert!(Array::open(db.store(), "/runs/c").is_err(), "{what}: aborted array exists");
    assert!(Group::open(db.store(), "/gone").is_err(), "{what}: aborted group exists");
}

#[test]
fn committed_hierarchy_survives_reopen_on_every_backend_and_durability() {
    let dir = tempfile::tempdir().unwrap();
    for backend in ALL {
        for durability in [Durability::Durable, Durability::Fast] {
            let what = format!("{} {durability:?}", backend.name());
            let path = dir.path().join(what.replace(' ', "-"));
            let db = open(backend, durability, &path, true);
            populate(&db);
            verify(&db, &format!("{what} before closing"));
            drop(db);
            verify(&open(backend, durability, &path, false), &format!("{what} after reopening"));
            // A third opening with the other durability (and `create` on an existing database)
            // sees the same.
            let other = if durability == Durability::Fast { Durability::Durable } else { Durability::Fast };
            verify(&open(backend, other, &path, true), &format!("{what} reopened {other:?}"));
        }
    }
}

#[test]
fn last_of_many_fast_commits_survives_a_clean_close() {
    let dir = tempfile::tempdir().unwrap();
    for backend in ALL {
        let path = dir.path().join(backend.name());
        let db = open(backend, Durability::Fast, &path, true);
        let a = Array::create(db.store(), "/counter", ArrayMetadata::new(DataType::UInt32, vec![1], vec![1])).unwrap();
        for i in 1..=50u32 {
            a.write_region(&[0], &[1], &[i]).unwrap();
        }
        drop((a, db));
        let db = open(backend, Durability::Fast, &path, false);
        let a = Array::open(db.store(), "/counter").unwrap();
        assert_eq!(a.read_all::<u32>().unwrap(), vec![50], "{}", backend.name());
    }
}

#[test]
fn fast_commits_survive_when_a_snapshot_outlives_the_database_handle() {
    let dir = tempfile::tempdir().unwrap();
    for backend in ALL {
        let path = dir.path().join(backend.name());
        let db = open(backend, Durability::Fast, &path, true);
        let a = Array::create(db.store(), "/x", ArrayMetadata::new(DataType::Int16, vec![4], vec![2])).unwrap();
        let snapshot = db.begin_read().unwrap();
        a.write_region(&[0], &[4], &[1i16, 2, 3, 4]).unwrap();
        drop((a, db));
        // The snapshot still reads (it may hold the engine open until it is dropped).
        assert!(Array::open(snapshot.store(), "/x").is_ok(), "{}", backend.name());
        drop(snapshot);
        let db = open(backend, Durability::Fast, &path, false);
        let x = Array::open(db.store(), "/x").unwrap();
        assert_eq!(x.read_all::<i16>().unwrap(), vec![1, 2, 3, 4], "{}", backend.name());
    }
}
