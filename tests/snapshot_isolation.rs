//! What readers see while a writer works: a transaction spanning several arrays and groups is
//! invisible to snapshots and to the auto-commit store until it commits, then visible whole; a
//! snapshot taken before a commit keeps showing the old data on redb and LMDB
//! (`stable_snapshots() == true`), while sled says it cannot promise that. A snapshot store is
//! read-only.

use zarrdb::error::StoreError;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Durability, Group};

const ALL: [Backend; 3] = [Backend::Redb, Backend::Lmdb, Backend::Sled];

fn fresh(backend: Backend) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder().backend(backend).durability(Durability::Fast).create(dir.path().join("db")).unwrap();
    (dir, db)
}

fn meta() -> ArrayMetadata {
    ArrayMetadata::new(DataType::Int64, vec![8], vec![3])
}

#[test]
fn stable_snapshots_is_true_for_redb_and_lmdb_only() {
    for (backend, stable) in [(Backend::Redb, true), (Backend::Lmdb, true), (Backend::Sled, false)] {
        assert_eq!(fresh(backend).1.stable_snapshots(), stable, "{}", backend.name());
    }
}

#[test]
fn a_snapshot_keeps_showing_the_commit_it_began_on() {
    for backend in [Backend::Redb, Backend::Lmdb] {
        let (_dir, db) = fresh(backend);
        let a = Array::create(db.store(), "/a", meta()).unwrap();
        a.write_region(&[0], &[8], &[1i64; 8]).unwrap();
        let old = db.begin_read().unwrap();

        a.write_region(&[2], &[4], &[5i64; 4]).unwrap();
        let txn = db.begin_write().unwrap();
        Array::create(txn.store(), "/b", meta()).unwrap();
        txn.store().erase_prefix("a/c/").unwrap();
        txn.commit().unwrap();
        db.store().set("loose", b"x").unwrap();

        let seen = Array::open(old.store(), "/a").unwrap();
        assert_eq!(seen.read_all::<i64>().unwrap(), vec![1; 8], "{}", backend.name());
        assert!(Array::open(old.store(), "/b").is_err(), "{}", backend.name());
        assert_eq!(old.store().get("loose").unwrap(), None, "{}", backend.name());
        assert_eq!(old.store().list().unwrap(), vec!["a/c/0", "a/c/1", "a/c/2", "a/zarr.json", "zarr.json"]);
        // A clone is the same snapshot; a new one sees the latest commit.
        assert_eq!(Array::open(old.clone().store(), "/a").unwrap().read_all::<i64>().unwrap(), vec![1; 8]);
        let new = db.begin_read().unwrap();
        assert_eq!(Array::open(new.store(), "/a").unwrap().read_all::<i64>().unwrap(), vec![0; 8]);
        assert!(Array::open(new.store(), "/b").is_ok());
    }
}

#[test]
fn a_multi_array_transaction_is_invisible_until_commit() {
    for backend in ALL {
        let (_dir, db) = fresh(backend);
        let a = Array::create(db.store(), "/a", meta()).unwrap();
        a.write_region(&[0], &[8], &[1i64; 8]).unwrap();
        let before = db.store().list().unwrap();

        let txn = db.begin_write().unwrap();
        Array::open(txn.store(), "/a").unwrap().write_region(&[0], &[8], &[2i64; 8]).unwrap();
        let b = Array::create(txn.store(), "/g/b", meta()).unwrap();
        b.write_region(&[0], &[8], &[3i64; 8]).unwrap();
        let mut root = Group::open(txn.store(), "/").unwrap();
        root.set_attributes(serde_json::json!({"v": 2}).as_object().unwrap().clone()).unwrap();

        // Another thread's readers see none of it, whatever the backend.
        std::thread::scope(|s| {
            s.spawn(|| {
                let snapshot = db.begin_read().unwrap();
                for store in [db.store(), snapshot.store()] {
                    assert_eq!(store.list().unwrap(), before, "{}", backend.name());
                    assert_eq!(Array::open(store.clone(), "/a").unwrap().read_all::<i64>().unwrap(), vec![1; 8]);
                    assert!(Array::open(store.clone(), "/g/b").is_err());
                    assert!(Group::open(store, "/").unwrap().attributes().is_empty());
                }
            });
        });
        // Nor does this thread's auto-commit store.
        assert_eq!(a.read_all::<i64>().unwrap(), vec![1; 8], "{}", backend.name());
        txn.commit().unwrap();

        for store in [db.store(), db.begin_read().unwrap().store()] {
            assert_eq!(Array::open(store.clone(), "/a").unwrap().read_all::<i64>().unwrap(), vec![2; 8]);
            assert_eq!(Array::open(store.clone(), "/g/b").unwrap().read_all::<i64>().unwrap(), vec![3; 8]);
            assert_eq!(Group::open(store, "/").unwrap().attributes()["v"], 2, "{}", backend.name());
        }
    }
}

#[test]
fn snapshot_store_refuses_writes() {
    for backend in ALL {
        let (_dir, db) = fresh(backend);
        db.store().set("k", b"v").unwrap();
        let snapshot = db.begin_read().unwrap();
        let store = snapshot.store();
        assert!(!store.capabilities().writable);
        assert!(matches!(store.set("k", b"w"), Err(StoreError::Unsupported { .. })));
        assert!(matches!(store.set_partial_values(&[("k", 0, b"w")]), Err(StoreError::Unsupported { .. })));
        assert!(matches!(store.erase("k"), Err(StoreError::Unsupported { .. })));
        assert!(matches!(store.erase_prefix(""), Err(StoreError::Unsupported { .. })));
        assert!(Array::create(store.clone(), "/x", meta()).is_err());
        assert_eq!(db.store().list().unwrap(), vec!["k"], "{}", backend.name());
        assert_eq!(db.store().get("k").unwrap().as_deref(), Some(&b"v"[..]));
    }
}
