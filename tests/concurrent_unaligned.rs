//! Eight threads share one array handle and write random unaligned runs of their own rows, so
//! every chunk and shard is read-modify-written by all of them at once (issue 6, acceptance 1).
//! No update may be lost: on memory, directory, redb, LMDB and sled, with plain chunks and with
//! shards, through the auto-commit store and inside one shared transaction.

#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the workload uses only part of the shared generator")]
mod splitmix;
#[path = "common/unaligned_workload.rs"]
mod unaligned_workload;

use std::sync::Arc;

use unaligned_workload::{lost_updates, metadata, write_concurrently};
use zarrdb::{Array, Backend, Database, DirectoryStore, Durability, MemoryStore, Store};

const WRITERS: u64 = 8;
const STEPS: u64 = 150;

/// Run the workload on `store` and fail on any lost update.
fn check(store: Arc<dyn Store>, label: &str) {
    for sharded in [false, true] {
        let array = Array::create(store.clone(), "/a", metadata(sharded)).unwrap();
        let records = write_concurrently(&array, WRITERS, STEPS, 0x5eed);
        let lost = lost_updates(&array, &records);
        assert!(
            lost.is_empty(),
            "{label}, sharded {sharded}: {} lost updates, e.g. {:?}",
            lost.len(),
            &lost[..lost.len().min(5)]
        );
        zarrdb::Node::erase(store.clone(), "/a").unwrap();
    }
}

#[test]
fn memory() {
    check(Arc::new(MemoryStore::new()), "memory");
}

#[test]
fn directory() {
    let dir = tempfile::tempdir().unwrap();
    check(Arc::new(DirectoryStore::create(dir.path().join("d")).unwrap()), "directory");
}

#[test]
fn databases_auto_commit_and_shared_transaction() {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let dir = tempfile::tempdir().unwrap();
        let db =
            Database::builder().backend(backend).durability(Durability::Fast).create(dir.path().join("db")).unwrap();
        check(db.store(), &format!("{} auto-commit", backend.name()));
        let txn = db.begin_write().unwrap();
        check(txn.store(), &format!("{} in one transaction", backend.name()));
        txn.commit().unwrap();
    }
}
