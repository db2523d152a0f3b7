//! Many threads share one array handle (DESIGN §6): on the auto-commit store, concurrent partial
//! writes into the same chunk each run in their own transaction, so none is lost; inside one
//! explicit transaction, threads writing whole chunks in parallel all land, and partial writes
//! into one chunk do not lose each other's updates either (the chunk versions of DESIGN §6,
//! `src/array/chunk_sync.rs`).

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Durability};

const ALL: [Backend; 3] = [Backend::Redb, Backend::Lmdb, Backend::Sled];
const THREADS: u64 = 4;
const PER_THREAD: u64 = 16;

fn fresh(backend: Backend) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder().backend(backend).durability(Durability::Fast).create(dir.path().join("db")).unwrap();
    (dir, db)
}

/// One chunk of 64 elements: every thread writes its own elements one at a time, so every write
/// is a read-modify-write of the same chunk.
fn interleaved_partial_writes(a: &Array) {
    let start = std::sync::Barrier::new(THREADS as usize);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let start = &start;
            s.spawn(move || {
                start.wait();
                for i in 0..PER_THREAD {
                    let x = i * THREADS + t;
                    a.write_region(&[x], &[1], &[x as u32 + 1]).unwrap();
                }
            });
        }
    });
}

fn expected() -> Vec<u32> {
    (1..=(THREADS * PER_THREAD) as u32).collect()
}

fn meta(chunk: u64) -> ArrayMetadata {
    ArrayMetadata::new(DataType::UInt32, vec![THREADS * PER_THREAD], vec![chunk])
}

#[test]
fn partial_writes_to_one_chunk_through_the_auto_commit_store_are_all_kept() {
    for backend in ALL {
        let (_dir, db) = fresh(backend);
        let a = Array::create(db.store(), "/a", meta(THREADS * PER_THREAD)).unwrap();
        interleaved_partial_writes(&a);
        assert_eq!(a.read_all::<u32>().unwrap(), expected(), "{}", backend.name());
    }
}

#[test]
fn whole_chunk_writes_from_many_threads_in_one_transaction_all_land() {
    for backend in ALL {
        let (_dir, db) = fresh(backend);
        let txn = db.begin_write().unwrap();
        // One element per chunk: every write replaces a whole chunk, no chunk is shared.
        let a = Array::create(txn.store(), "/a", meta(1)).unwrap();
        interleaved_partial_writes(&a);
        assert_eq!(a.read_all::<u32>().unwrap(), expected(), "{} inside", backend.name());
        txn.commit().unwrap();
        let a = Array::open(db.store(), "/a").unwrap();
        assert_eq!(a.read_all::<u32>().unwrap(), expected(), "{} committed", backend.name());
    }
}

#[test]
fn partial_writes_to_one_chunk_in_one_transaction_are_all_kept() {
    let (_dir, db) = fresh(Backend::Redb);
    // A lost update needs two threads inside one read-modify-write at once: give it many chances.
    for round in 0..100 {
        let txn = db.begin_write().unwrap();
        let a = Array::create(txn.store(), &format!("/a{round}"), meta(THREADS * PER_THREAD)).unwrap();
        interleaved_partial_writes(&a);
        assert_eq!(a.read_all::<u32>().unwrap(), expected(), "round {round}");
        txn.commit().unwrap();
    }
}
