//! Another process grows an LMDB map beyond this process's: LMDB then answers this process's next
//! transaction with `MDB_MAP_RESIZED`. zarrdb adopts the new size and goes on. Before, every read
//! and write of the open database failed from then on.
//!
//! This process opens the database with a 1 MiB map and keeps it open; `zarrdb import` (another
//! process, default map) adds 8 MiB of chunks; this process then reads them and writes more.

use std::process::Command;

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, DirectoryStore};

#[test]
fn a_map_grown_by_another_process_is_adopted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = {
        let mut b = Database::builder();
        b.backend(Backend::Lmdb).lmdb_initial_map_size(1 << 20);
        b.create(&path).unwrap()
    };
    let small = Array::create(db.store(), "/small", ArrayMetadata::new(DataType::UInt8, vec![4], vec![4])).unwrap();
    small.write_region(&[0], &[4], &[1u8, 2, 3, 4]).unwrap();

    // 8 MiB of incompressible chunks in a folder, imported by another process.
    let source = dir.path().join("source.zarr");
    std::fs::create_dir(&source).unwrap();
    let store = std::sync::Arc::new(DirectoryStore::open(&source).unwrap());
    let big = Array::create(store, "/", ArrayMetadata::new(DataType::UInt64, vec![1 << 20], vec![1 << 16])).unwrap();
    let values: Vec<u64> = (0..1u64 << 20).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    big.write_region(&[0], &[1 << 20], &values).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_zarrdb"))
        .args(["import", &source.display().to_string(), &format!("lmdb:{}", path.display()), "--at", "/big"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    // This process's map is still 1 MiB: the next transactions must adopt the grown one.
    let read = Array::open(db.store(), "/big").unwrap().read_all::<u64>().unwrap();
    assert!(read == values, "the imported values read back");
    small.write_region(&[0], &[2], &[9u8, 9]).unwrap();
    assert_eq!(small.read_all::<u8>().unwrap(), [9, 9, 3, 4]);
}
