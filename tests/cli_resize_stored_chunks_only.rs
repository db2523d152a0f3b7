//! Growing a dimension costs what is stored, not the grid (issue 40): `zarrdb resize` of an
//! array of shape (1, 10^12) with (2, 2) chunks to (2, 10^12) touches the 5 * 10^11 chunks of the
//! grown boundary only where one is stored. Before, every chunk of that slab was listed (stored
//! or not), which never ended. The CLI runs under `timeout` (a guard against the hang, not a
//! timing) and a heap cap, on redb, LMDB and a folder; afterwards the old values are intact, the
//! grown row reads as the fill value, and a boundary chunk whose padding held stray data (a chunk
//! written by another tool) has that padding reset, as a growth must (`src/array/resize.rs`).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, DirectoryStore, FillValue, Store};

const LONG: u64 = 1_000_000_000_000;

/// The array, its values written, and a boundary chunk stored with stray padding.
fn fill(store: Arc<dyn Store>) {
    let mut meta = ArrayMetadata::new(DataType::UInt8, vec![1, LONG], vec![2, 2]);
    meta.fill_value = FillValue::from_le_bytes(vec![9]);
    let a = Array::create(store.clone(), "/a", meta).unwrap();
    a.write_region(&[0, 4], &[1, 3], &[1u8, 2, 3]).unwrap();
    a.write_region(&[0, LONG - 2], &[1, 2], &[4u8, 5]).unwrap();
    // Chunk (0, 1000) as another writer may store it: row 1, outside the array, is not fill.
    store.set("a/c/0/1000", &[6, 7, 66, 77]).unwrap();
}

fn resize(locator: &str) {
    let out = Command::new("timeout")
        .args(["-s", "KILL", "60", "prlimit", &format!("--data={}", 512 << 20), "--"])
        .arg(env!("CARGO_BIN_EXE_zarrdb"))
        .args(["resize", locator, "/a", "--shape", &format!("2,{LONG}")])
        .output()
        .unwrap();
    assert!(out.status.success(), "resize {locator}: {out:?}");
}

fn check(store: Arc<dyn Store>) {
    let a = Array::open(store, "/a").unwrap();
    assert_eq!(a.shape(), [2, LONG]);
    assert_eq!(a.read_region::<u8>(&[0, 3], &[2, 5]).unwrap(), [9, 1, 2, 3, 9, 9, 9, 9, 9, 9]);
    assert_eq!(a.read_region::<u8>(&[0, LONG - 3], &[2, 3]).unwrap(), [9, 4, 5, 9, 9, 9]);
    assert_eq!(a.read_region::<u8>(&[0, 2000], &[2, 2]).unwrap(), [6, 7, 9, 9], "stray padding reset");
    assert_eq!(a.read_region::<u8>(&[1, LONG / 2], &[1, 4]).unwrap(), [9; 4]);
    assert!(a.check().unwrap().is_ok());
}

fn database(backend: Backend, path: &Path, locator: &str) {
    let db = Database::builder().backend(backend).create(path).unwrap();
    fill(db.store());
    drop(db);
    resize(locator);
    let db = Database::builder().backend(backend).open(path).unwrap();
    check(db.store());
}

#[test]
fn growing_a_long_array_on_redb() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.redb");
    database(Backend::Redb, &path, &format!("redb:{}", path.display()));
}

#[test]
fn growing_a_long_array_on_lmdb() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.lmdb");
    database(Backend::Lmdb, &path, &format!("lmdb:{}", path.display()));
}

#[test]
fn growing_a_long_array_in_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.zarr");
    fill(Arc::new(DirectoryStore::create(&path).unwrap()));
    resize(&format!("dir:{}", path.display()));
    check(Arc::new(DirectoryStore::open(&path).unwrap()));
}
