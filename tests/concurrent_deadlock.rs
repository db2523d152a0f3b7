//! Writers touch overlapping chunks of several arrays in opposite orders, in transactions, in
//! shared transactions and from inside rayon's pool (where zarrs' chunk locks deadlocked): every
//! writer finishes within a bound, on every backend (issue 6, acceptance 3).

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use rayon::prelude::*;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, DirectoryStore, Durability, MemoryStore, Store};

const ARRAYS: [&str; 3] = ["/a", "/b", "/c"];
const ROUNDS: u64 = 30;
/// Far above the few seconds the work takes; only a deadlock reaches it.
const BOUND: Duration = Duration::from_secs(120);

fn create_arrays(store: &Arc<dyn Store>) -> Vec<Array> {
    ARRAYS
        .iter()
        .map(|p| {
            Array::create(store.clone(), p, ArrayMetadata::new(DataType::UInt32, vec![40, 40], vec![8, 8])).unwrap()
        })
        .collect()
}

/// A partial write of an unaligned 10 x 10 block across four chunks of each array, in the order
/// `forward` or reversed.
fn touch_all(arrays: &[Array], forward: bool, value: u32) {
    let block = vec![value; 100];
    let order: Vec<&Array> = if forward { arrays.iter().collect() } else { arrays.iter().rev().collect() };
    for a in order {
        a.write_region(&[3 + (value as u64 % 3), 5], &[10, 10], &block).unwrap();
    }
}

/// Run `work` on another thread and fail if it does not finish within `BOUND`.
fn within_bound(label: &str, work: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        work();
        let _ = done.send(());
    });
    match finished.recv_timeout(BOUND) {
        Ok(()) => worker.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            worker.join().unwrap();
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{label}: writers still running after {BOUND:?}: deadlock"),
    }
}

/// Threads and rayon tasks on `store` writing the arrays in opposite orders.
fn opposite_orders(store: Arc<dyn Store>) {
    let arrays = Arc::new(create_arrays(&store));
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let arrays = arrays.clone();
            s.spawn(move || (0..ROUNDS as u32).for_each(|r| touch_all(&arrays, t % 2 == 0, r * 4 + t + 1)));
        }
        // Writes issued from rayon's workers: each write's own parallel work runs on the same
        // pool, so a worker waiting inside one write picks up another.
        let arrays = arrays.clone();
        s.spawn(move || (0..ROUNDS as u32 * 4).into_par_iter().for_each(|r| touch_all(&arrays, r % 2 == 0, r + 1)));
    });
}

#[test]
fn memory_and_directory() {
    within_bound("memory", || opposite_orders(Arc::new(MemoryStore::new())));
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(DirectoryStore::create(dir.path().join("d")).unwrap());
    within_bound("directory", move || opposite_orders(store));
}

#[test]
fn databases() {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let dir = tempfile::tempdir().unwrap();
        let db =
            Database::builder().backend(backend).durability(Durability::Fast).create(dir.path().join("db")).unwrap();
        let db = Arc::new(db);
        // Auto-commit: every write its own transaction.
        let store = db.store();
        within_bound(&format!("{} auto-commit", backend.name()), move || opposite_orders(store));
        // Explicit transactions on several threads, each touching all arrays in its own order.
        let shared = db.clone();
        within_bound(&format!("{} transactions", backend.name()), move || {
            std::thread::scope(|s| {
                for t in 0..4u32 {
                    let db = &shared;
                    s.spawn(move || {
                        for r in 0..ROUNDS as u32 {
                            let txn = db.begin_write().unwrap();
                            let arrays: Vec<Array> =
                                ARRAYS.iter().map(|p| Array::open(txn.store(), p).unwrap()).collect();
                            touch_all(&arrays, t % 2 == 0, r * 4 + t + 1);
                            txn.commit().unwrap();
                        }
                    });
                }
            });
        });
        // One transaction shared by threads and rayon tasks writing in opposite orders.
        let shared = db.clone();
        within_bound(&format!("{} one shared transaction", backend.name()), move || {
            let txn = shared.begin_write().unwrap();
            let store = txn.store();
            let arrays = Arc::new(ARRAYS.iter().map(|p| Array::open(store.clone(), p).unwrap()).collect::<Vec<_>>());
            std::thread::scope(|s| {
                for t in 0..4u32 {
                    let arrays = arrays.clone();
                    s.spawn(move || (0..ROUNDS as u32).for_each(|r| touch_all(&arrays, t % 2 == 0, r * 4 + t + 1)));
                }
                let arrays = arrays.clone();
                s.spawn(move || {
                    (0..ROUNDS as u32 * 4).into_par_iter().for_each(|r| touch_all(&arrays, r % 2 == 0, r + 1))
                });
            });
            drop(arrays);
            txn.commit().unwrap();
        });
    }
}
