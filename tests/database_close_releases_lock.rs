//! Dropping a `Database` releases its lock before it returns, so this process or another one (a
//! `zarrdb check` run after a program closed its database, the parent of the crash tests) can open
//! the database right away (sled's threads let go of its lock a moment after the drop; opening
//! waits for that, up to 2 s). Each test opens a database, commits a durable region write and drops
//! it, 200 times in a row, and every open must succeed.

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Durability};

const ROUNDS: i32 = 200;

fn reopen_at_once(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(backend.name());
    let open = || Database::builder().backend(backend).durability(Durability::Durable).open(&path);
    let db = Database::builder().backend(backend).durability(Durability::Durable).create(&path).unwrap();
    Array::create(db.store(), "/a", ArrayMetadata::new(DataType::Int32, vec![1000], vec![10])).unwrap();
    drop(db);
    let mut refused = Vec::new();
    for round in 1..=ROUNDS {
        match open() {
            Ok(db) => Array::open(db.store(), "/a").unwrap().write_region(&[0], &[1000], &[round; 1000]).unwrap(),
            Err(e) => refused.push(format!("round {round}: {e}")),
        }
    }
    let first: Vec<&String> = refused.iter().take(3).collect();
    assert!(refused.is_empty(), "{} of {ROUNDS} opens right after a drop failed, first {first:?}", refused.len());
}

#[test]
fn redb_reopens_at_once() {
    reopen_at_once(Backend::Redb);
}

#[test]
fn lmdb_reopens_at_once() {
    reopen_at_once(Backend::Lmdb);
}

/// sled runs writes of its log buffers on its own thread pool, whose jobs hold the data file (and
/// its `flock`) after the `sled::Db` is dropped; `Database` returns from its drop without waiting.
#[test]
fn sled_reopens_at_once() {
    reopen_at_once(Backend::Sled);
}
