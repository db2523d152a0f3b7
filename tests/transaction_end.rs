//! How a transaction ends: dropping it or calling `abort` discards every change (nodes, chunks,
//! erasures), `commit` applies all of them; afterwards every handle made from its store — the
//! store itself, arrays, groups — fails with `StoreError::TransactionEnded` instead of reading or
//! writing anything, and the database takes the next transaction.

use std::sync::Arc;

use zarrdb::error::StoreError;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Durability, Error, Group, Store};

const ALL: [Backend; 3] = [Backend::Redb, Backend::Lmdb, Backend::Sled];

fn fresh(backend: Backend) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder().backend(backend).durability(Durability::Fast).create(dir.path().join("db")).unwrap();
    (dir, db)
}

fn meta() -> ArrayMetadata {
    ArrayMetadata::new(DataType::UInt16, vec![6], vec![2])
}

fn is_ended<T: std::fmt::Debug>(result: Result<T, Error>) -> bool {
    matches!(result, Err(Error::Store(StoreError::TransactionEnded { .. })))
}

fn store_is_ended(store: &Arc<dyn Store>) {
    assert!(matches!(store.get("keep/zarr.json"), Err(StoreError::TransactionEnded { .. })));
    assert!(matches!(store.set("x", b"1"), Err(StoreError::TransactionEnded { .. })));
    assert!(matches!(store.erase("keep/zarr.json"), Err(StoreError::TransactionEnded { .. })));
    assert!(matches!(store.erase_prefix(""), Err(StoreError::TransactionEnded { .. })));
    assert!(matches!(store.list_dir(""), Err(StoreError::TransactionEnded { .. })));
    assert!(matches!(store.list(), Err(StoreError::TransactionEnded { .. })));
    assert!(matches!(store.size("keep/zarr.json"), Err(StoreError::TransactionEnded { .. })));
}

/// A committed array `/keep` holding [1, 2, 3, 4, 5, 6].
fn committed(db: &Database) -> Array {
    let keep = Array::create(db.store(), "/keep", meta()).unwrap();
    keep.write_region(&[0], &[6], &[1u16, 2, 3, 4, 5, 6]).unwrap();
    keep
}

#[test]
fn drop_and_abort_discard_every_change() {
    for backend in ALL {
        let (_dir, db) = fresh(backend);
        let keep = committed(&db);
        let before = db.store().list().unwrap();
        for how in ["drop", "abort"] {
            let txn = db.begin_write().unwrap();
            let a = Array::create(txn.store(), "/new/a", meta()).unwrap();
            a.write_region(&[0], &[6], &[9u16; 6]).unwrap();
            Array::open(txn.store(), "/keep").unwrap().write_region(&[2], &[2], &[0u16, 0]).unwrap();
            txn.store().erase_prefix("keep/c/").unwrap();
            txn.store().set("loose", b"x").unwrap();
            assert_eq!(Array::open(txn.store(), "/keep").unwrap().read_all::<u16>().unwrap(), vec![0; 6]);
            if how == "drop" {
                drop(txn)
            } else {
                txn.abort()
            }
            assert_eq!(db.store().list().unwrap(), before, "{} {how}", backend.name());
            assert_eq!(keep.read_all::<u16>().unwrap(), vec![1, 2, 3, 4, 5, 6], "{} {how}", backend.name());
            // The handle made inside the transaction is ended, not writing to the database.
            assert!(is_ended(a.write_region(&[0], &[1], &[1u16])), "{} {how}", backend.name());
        }
    }
}

#[test]
fn handles_from_a_committed_transaction_are_ended() {
    for backend in ALL {
        let (_dir, db) = fresh(backend);
        committed(&db);
        let txn = db.begin_write().unwrap();
        let store = txn.store();
        let a = Array::create(store.clone(), "/a", meta()).unwrap();
        a.write_region(&[0], &[2], &[7u16, 8]).unwrap();
        let mut group = Group::open(store.clone(), "/").unwrap();
        txn.commit().unwrap();

        assert!(is_ended(a.read_all::<u16>()), "{}: read after commit", backend.name());
        assert!(is_ended(a.write_region(&[0], &[2], &[1u16, 1])), "{}: write after commit", backend.name());
        assert!(is_ended(group.set_attributes(Default::default())), "{}", backend.name());
        assert!(is_ended(group.child_names()), "{}", backend.name());
        assert!(is_ended(Array::open(store.clone(), "/a")), "{}", backend.name());
        assert!(is_ended(Array::create(store.clone(), "/b", meta())), "{}", backend.name());
        store_is_ended(&store);
        // Nothing after the commit reached the database.
        let a = Array::open(db.store(), "/a").unwrap();
        assert_eq!(a.read_all::<u16>().unwrap(), vec![7, 8, 0, 0, 0, 0], "{}", backend.name());
        assert!(Array::open(db.store(), "/b").is_err());
        assert_eq!(Group::open(db.store(), "/").unwrap().child_names().unwrap(), vec!["a", "keep"]);
    }
}

#[test]
fn ended_store_message_is_one_line_naming_the_key() {
    let (_dir, db) = fresh(Backend::Redb);
    let txn = db.begin_write().unwrap();
    let store = txn.store();
    txn.abort();
    let error = store.get("some/key").unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, StoreError::TransactionEnded { .. }), "{error:?}");
    assert!(!text.contains('\n') && text.contains("some/key"), "{text:?}");
}

#[test]
fn the_next_transaction_begins_after_each_kind_of_end() {
    for backend in ALL {
        let (_dir, db) = fresh(backend);
        db.begin_write().unwrap().commit().unwrap(); // empty commit
        db.begin_write().unwrap().abort();
        drop(db.begin_write().unwrap());
        let txn = db.begin_write().unwrap();
        txn.store().set("k", b"v").unwrap();
        txn.commit().unwrap();
        let txn = db.begin_write().unwrap();
        assert_eq!(txn.store().get("k").unwrap().as_deref(), Some(&b"v"[..]), "{}", backend.name());
    }
}
