//! One write transaction at a time: a second `begin_write` on the thread that holds one is refused
//! with `TransactionError::WouldDeadlock` (and so are auto-commit writes from that thread) instead
//! of waiting for itself; on another thread it waits until the first transaction ends, and then
//! sees its commit. Readers are never blocked by the writer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use zarrdb::error::TransactionError;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Durability, Error};

const ALL: [Backend; 3] = [Backend::Redb, Backend::Lmdb, Backend::Sled];

fn fresh(backend: Backend) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder().backend(backend).durability(Durability::Fast).create(dir.path().join("db")).unwrap();
    (dir, db)
}

#[test]
fn begin_write_on_the_holding_thread_would_deadlock() {
    for backend in ALL {
        let (_dir, db) = fresh(backend);
        let txn = db.begin_write().unwrap();
        txn.store().set("k", b"mine").unwrap();
        for attempt in [db.begin_write(), db.clone().begin_write()] {
            let error = attempt.expect_err("a second write transaction on this thread");
            let text = error.to_string();
            assert!(matches!(error, Error::Transaction(TransactionError::WouldDeadlock { .. })), "{error:?}");
            assert!(!text.contains('\n') && text.contains(&db.path().display().to_string()), "{text:?}");
        }
        // Auto-commit writes would wait for the same lock: refused too, writing nothing.
        assert!(db.store().set("other", b"x").is_err(), "{}", backend.name());
        let meta = ArrayMetadata::new(DataType::UInt8, vec![4], vec![2]);
        assert!(matches!(
            Array::create(db.store(), "/a", meta),
            Err(Error::Transaction(TransactionError::WouldDeadlock { .. }))
        ));
        // Reads are fine, and the refusals did not disturb the open transaction.
        assert_eq!(db.store().get("k").unwrap(), None);
        txn.commit().unwrap();
        assert_eq!(db.store().get("k").unwrap().as_deref(), Some(&b"mine"[..]), "{}", backend.name());
        assert_eq!(db.store().get("other").unwrap(), None);
        assert!(Array::open(db.store(), "/a").is_err());
        // Once it has ended, this thread may begin again.
        db.begin_write().unwrap().commit().unwrap();
        db.store().set("other", b"y").unwrap();
    }
}

#[test]
fn begin_write_on_another_thread_waits_for_the_commit() {
    for backend in ALL {
        let (_dir, db) = fresh(backend);
        db.store().set("counter", b"0").unwrap();
        let first = db.begin_write().unwrap();
        first.store().set("counter", b"1").unwrap();
        let released = AtomicBool::new(false);
        let (ready_tx, ready_rx) = mpsc::channel();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                ready_tx.send(()).unwrap();
                let second = db.begin_write().unwrap();
                // It could only begin once the first had ended...
                assert!(released.load(Ordering::SeqCst), "began while the first was open");
                // ...and it began on the first one's commit.
                let seen = second.store().get("counter").unwrap();
                second.store().set("counter", b"2").unwrap();
                second.commit().unwrap();
                seen
            });
            ready_rx.recv().unwrap();
            // Give the waiter time to reach begin_write, so a begin_write that did not wait would
            // be caught; the outcome does not depend on the timing.
            std::thread::sleep(std::time::Duration::from_millis(50));
            // Readers are not blocked by the open transaction, nor by the waiting one.
            assert_eq!(db.store().get("counter").unwrap().as_deref(), Some(&b"0"[..]));
            released.store(true, Ordering::SeqCst);
            first.commit().unwrap();
            let seen = waiter.join().unwrap();
            assert_eq!(seen.as_deref(), Some(&b"1"[..]), "{}", backend.name());
        });
        assert_eq!(db.store().get("counter").unwrap().as_deref(), Some(&b"2"[..]), "{}", backend.name());
    }
}

#[test]
fn transactions_on_many_threads_serialize() {
    for backend in ALL {
        let (_dir, db) = fresh(backend);
        let meta = ArrayMetadata::new(DataType::UInt32, vec![4], vec![4]);
        let a = Array::create(db.store(), "/n", meta).unwrap();
        // Each thread holds a transaction across a read and a write: increments are never lost.
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10 {
                        let txn = db.begin_write().unwrap();
                        let n = Array::open(txn.store(), "/n").unwrap();
                        let v = n.read_all::<u32>().unwrap();
                        n.write_region(&[0], &[4], &v.iter().map(|x| x + 1).collect::<Vec<_>>()).unwrap();
                        txn.commit().unwrap();
                    }
                });
            }
        });
        assert_eq!(a.read_all::<u32>().unwrap(), vec![40; 4], "{}", backend.name());
    }
}

#[test]
fn the_store_of_a_transaction_works_on_other_threads_and_the_beginning_thread_commits() {
    let (_dir, db) = fresh(Backend::Redb);
    let txn = db.begin_write().unwrap();
    let store = txn.store();
    std::thread::scope(|s| {
        for t in 0..4 {
            let store = store.clone();
            s.spawn(move || store.set(&format!("k{t}"), b"v").unwrap());
        }
    });
    txn.commit().unwrap();
    assert_eq!(db.store().list_prefix("k").unwrap(), vec!["k0", "k1", "k2", "k3"]);
}
