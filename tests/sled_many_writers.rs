//! Eight writers committing small read-modify-writes as fast as they can into one sled database,
//! in fast mode. sled 0.34.7 deadlocked on this when commits were not flushed each time
//! (`store/sled/mod.rs`, `SledEngine::commit`): with a flush at most every 500 ms, two runs of
//! this test in three hung for ever, every thread parked. A watchdog turns a hang into a failure,
//! and every round also checks that no update was lost.

#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the workload uses only part of the shared generator")]
mod splitmix;
#[path = "common/unaligned_workload.rs"]
mod unaligned_workload;

use std::sync::{mpsc, Arc};
use std::time::Duration;

use unaligned_workload::{lost_updates, metadata, write_concurrently};
use zarrdb::{Array, Backend, Database, Durability, Store};

const WRITERS: u64 = 8;
const STEPS: u64 = 1500;
const ROUNDS: u64 = 4;

/// The rounds take about 10 s (release) or 40 s (debug); a hang shows as no answer after this.
const DEADLINE: Duration = Duration::from_secs(300);

/// One round: a fresh database, the workload on plain chunks and on shards, through the
/// auto-commit store and then inside one shared transaction (whose large commit and erase leave
/// free segments behind, which sled truncates).
fn round(seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let db =
        Database::builder().backend(Backend::Sled).durability(Durability::Fast).create(dir.path().join("db")).unwrap();
    check(db.store(), seed);
    let txn = db.begin_write().unwrap();
    check(txn.store(), seed);
    txn.commit().unwrap();
}

fn check(store: Arc<dyn Store>, seed: u64) {
    for sharded in [false, true] {
        let array = Array::create(store.clone(), "/a", metadata(sharded)).unwrap();
        let records = write_concurrently(&array, WRITERS, STEPS, seed);
        let lost = lost_updates(&array, &records);
        assert!(lost.is_empty(), "round {seed}, sharded {sharded}: {} lost updates", lost.len());
        zarrdb::Node::erase(store.clone(), "/a").unwrap();
    }
}

#[test]
fn fast_mode_writers_never_hang_sled() {
    let (done, finished) = mpsc::channel();
    // Left behind if it hangs: the test fails, and the process ends with the harness.
    std::thread::spawn(move || {
        for seed in 0..ROUNDS {
            round(seed);
        }
        let _ = done.send(());
    });
    match finished.recv_timeout(DEADLINE) {
        Ok(()) => {}
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("a round failed (see its panic above)"),
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{ROUNDS} rounds did not end in {DEADLINE:?}: sled hung"),
    }
}
