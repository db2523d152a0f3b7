//! A held LMDB transaction whose commit finds the map full lets go of LMDB's writer lock while the
//! map grows. If another process commits in that gap, the batch, built on the state before, must
//! not be applied over it (a lost update): the commit is refused and nothing of it is stored.
//! Before, the batch was committed again blindly.
//!
//! This process holds a snapshot, so the growth waits for it; `zarrdb import` (another process)
//! queues on LMDB's writer lock and commits in the gap; then the snapshot ends.

use std::process::Command;
use std::time::Duration;

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, DirectoryStore};

#[test]
fn a_commit_in_the_gap_refuses_the_held_batch() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = {
        let mut b = Database::builder();
        b.backend(Backend::Lmdb).lmdb_initial_map_size(1 << 20);
        b.create(&path).unwrap()
    };
    let source = dir.path().join("source.zarr");
    std::fs::create_dir(&source).unwrap();
    let store = std::sync::Arc::new(DirectoryStore::open(&source).unwrap());
    let small = Array::create(store, "/", ArrayMetadata::new(DataType::UInt8, vec![4], vec![4])).unwrap();
    small.write_region(&[0], &[4], &[1u8, 2, 3, 4]).unwrap();

    let txn = db.begin_write().unwrap();
    txn.store().set("big", &vec![7u8; 4 << 20]).unwrap();
    // Queued on LMDB's writer lock, which the transaction holds until its commit fails.
    let mut child = Command::new(env!("CARGO_BIN_EXE_zarrdb"))
        .args(["import", &source.display().to_string(), &format!("lmdb:{}", path.display()), "--at", "/other"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let snapshot = db.begin_read().unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(4));
        drop(snapshot);
    });
    let committed = txn.commit();
    release.join().unwrap();
    assert!(child.wait().unwrap().success(), "the other process's import");

    let err = committed.expect_err("the held batch is refused once another process committed");
    assert!(err.to_string().contains("another process committed"), "{err}");
    assert_eq!(db.store().get("big").unwrap(), None, "nothing of the refused batch is stored");
    let other = Array::open(db.store(), "/other").unwrap();
    assert_eq!(other.read_all::<u8>().unwrap(), [1, 2, 3, 4], "the other process's commit stands");
}
