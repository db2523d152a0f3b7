//! LMDB's memory map grows by itself: a database started with a 1 MiB map takes ~20 MiB of chunks
//! in one transaction, in many small auto-commit writes, and as one value larger than the whole
//! initial map, without `MDB_MAP_FULL` ever reaching the caller; the data reads back after
//! reopening with the same small initial map, which keeps growing on later writes. The map size
//! LMDB records in the file shows the map really started at 1 MiB and grew.

use std::path::Path;

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Durability};

const MIB: usize = 1 << 20;
/// 20 chunks of 256x256 u32 (256 KiB each) per 1280x1024 array: 5 MiB per array.
const SHAPE: [u64; 2] = [1280, 1024];
const CHUNK: [u64; 2] = [256, 256];

fn open(path: &Path, durability: Durability, create: bool) -> Database {
    let mut b = Database::builder();
    b.backend(Backend::Lmdb).durability(durability).lmdb_initial_map_size(MIB);
    if create { b.create(path) } else { b.open(path) }.unwrap()
}

/// Values that never equal the fill value, different for every array.
fn values(seed: u32) -> Vec<u32> {
    (0..SHAPE[0] * SHAPE[1]).map(|i| ((i as u32).wrapping_mul(2_654_435_761) ^ seed) | 1).collect()
}

fn create(store: std::sync::Arc<dyn zarrdb::Store>, name: &str) -> Array {
    Array::create(store, name, ArrayMetadata::new(DataType::UInt32, SHAPE.to_vec(), CHUNK.to_vec())).unwrap()
}

/// The map size recorded in the closed database at `path` (LMDB stores it with every commit).
fn stored_map_size(path: &Path) -> usize {
    // SAFETY: the database is closed; nothing else maps the file.
    let env = unsafe { heed::EnvOpenOptions::new().open(path) }.unwrap();
    let size = env.info().map_size;
    env.prepare_for_closing().wait();
    size
}

fn check(db: &Database, names: &[(&str, u32)]) {
    for (name, seed) in names {
        let a = Array::open(db.store(), name).unwrap();
        assert!(a.read_all::<u32>().unwrap() == values(*seed), "{name} reads back");
    }
}

#[test]
fn one_large_transaction_grows_the_map() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    drop(open(&path, Durability::Durable, true));
    assert_eq!(stored_map_size(&path), MIB, "the map starts small");
    let db = open(&path, Durability::Durable, false);
    let txn = db.begin_write().unwrap();
    let names = [("/a", 1), ("/b", 2), ("/c", 3), ("/d", 4)];
    for (name, seed) in names {
        create(txn.store(), name).write_region(&[0, 0], &SHAPE, &values(seed)).unwrap();
    }
    txn.commit().unwrap();
    check(&db, &names);
    drop(db);
    let grown = stored_map_size(&path);
    assert!((20 * MIB..1 << 30).contains(&grown), "the map grew to {grown} bytes");

    let db = open(&path, Durability::Durable, false);
    check(&db, &names);
    // Past the grown size of the first session: grows again after reopening.
    let txn = db.begin_write().unwrap();
    create(txn.store(), "/e").write_region(&[0, 0], &SHAPE, &values(5)).unwrap();
    create(txn.store(), "/f").write_region(&[0, 0], &SHAPE, &values(6)).unwrap();
    txn.commit().unwrap();
    check(&db, &[("/a", 1), ("/e", 5), ("/f", 6)]);
    drop(db);
    assert!(stored_map_size(&path) > grown, "grew again");
}

#[test]
fn many_small_commits_grow_the_map() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = open(&path, Durability::Fast, true);
    let names = [("/p", 7), ("/q", 8), ("/r", 9), ("/s", 10)];
    for (name, seed) in names {
        let a = create(db.store(), name);
        let v = values(seed);
        // One auto-commit write per chunk row (4 chunks, 1 MiB each).
        for row in 0..SHAPE[0] / CHUNK[0] {
            let rows = (row * CHUNK[0]) as usize..((row + 1) * CHUNK[0]) as usize;
            let part = &v[rows.start * SHAPE[1] as usize..rows.end * SHAPE[1] as usize];
            a.write_region(&[row * CHUNK[0], 0], &[CHUNK[0], SHAPE[1]], part).unwrap();
        }
    }
    check(&db, &names);
    drop(db);
    assert!((20 * MIB..1 << 30).contains(&stored_map_size(&path)));
    check(&open(&path, Durability::Fast, false), &names);
}

#[test]
fn one_value_larger_than_the_initial_map() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let big: Vec<u8> = (0..6 * MIB).map(|i| (i % 251) as u8).collect();
    let db = open(&path, Durability::Fast, true);
    db.store().set("blob", &big).unwrap();
    assert!(db.store().get("blob").unwrap().as_deref() == Some(&big[..]));
    drop(db);
    assert!((6 * MIB..1 << 30).contains(&stored_map_size(&path)));
    let db = open(&path, Durability::Fast, false);
    assert!(db.store().get("blob").unwrap().as_deref() == Some(&big[..]));
    assert_eq!(db.store().size("blob").unwrap(), Some(big.len() as u64));
}

#[test]
fn new_readers_are_not_blocked_while_the_map_waits_to_grow() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(&dir.path().join("db"), Durability::Fast, true);
    let db = &db;
    let held = db.begin_read().unwrap();
    std::thread::scope(|s| {
        // This commit fills the map; growing it waits until `held` is dropped.
        let writer = s.spawn(|| db.store().set("big", &vec![7u8; 4 * MIB]));
        // Let the writer reach the growth; a reader that waits for it is caught only then.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let (tx, rx) = std::sync::mpsc::channel();
        s.spawn(move || tx.send(db.begin_read().is_ok()));
        // Only a bound on a hang: a snapshot is due at once.
        let answered = rx.recv_timeout(std::time::Duration::from_secs(5));
        drop(held);
        writer.join().unwrap().unwrap();
        assert_eq!(answered, Ok(true), "begin_read waited for the map growth");
    });
}
