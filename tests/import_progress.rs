//! The progress callback of an import and an export: called after every window, counts only
//! grow, and the last call reports every value and byte written; an LMDB database with a small map
//! takes an import far larger than its map (the map is grown before the import begins).

use std::sync::{Arc, Mutex};

use zarrdb::transfer::Progress;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, DirectoryStore, ExportOptions, ImportOptions};

/// A folder holding one u16 array of 2,500 chunks of 1 KiB.
fn folder(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("src.zarr");
    let store = Arc::new(DirectoryStore::create(&path).unwrap());
    let a =
        Array::create(store, "/a", ArrayMetadata::new(DataType::UInt16, vec![50 * 32, 50 * 16], vec![32, 16])).unwrap();
    let values: Vec<u16> = (0..50 * 32 * 50 * 16).map(|i| (i % 65_521) as u16 | 1).collect();
    a.write_region(&[0, 0], &[50 * 32, 50 * 16], &values).unwrap();
    path
}

fn check_progress(seen: &[Progress], values: u64, bytes: u64) {
    assert!(seen.len() >= 3, "2,500 values take more than one window: {} calls", seen.len());
    for pair in seen.windows(2) {
        assert!(pair[1].values_done > pair[0].values_done || pair[1] == pair[0], "{pair:?}");
        assert!(pair[1].bytes_done >= pair[0].bytes_done, "{pair:?}");
    }
    let last = seen.last().unwrap();
    assert_eq!(
        (last.values_done, last.values_total, last.bytes_done, last.bytes_total),
        (values, values, bytes, bytes)
    );
}

#[test]
fn progress_counts_every_value_and_byte() {
    let dir = tempfile::tempdir().unwrap();
    let src = folder(dir.path());
    let db = Database::create(dir.path().join("db.redb")).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let report = db.import(&src, &ImportOptions::default().progress(move |p| log.lock().unwrap().push(p))).unwrap();
    assert_eq!(report.chunks, 2500);
    check_progress(&seen.lock().unwrap(), report.chunks + report.nodes, report.bytes);

    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let exported = db
        .export(dir.path().join("out.zip"), &ExportOptions::default().progress(move |p| log.lock().unwrap().push(p)))
        .unwrap();
    check_progress(&seen.lock().unwrap(), exported.values, exported.bytes);
}

#[test]
fn lmdb_import_larger_than_the_map() {
    let dir = tempfile::tempdir().unwrap();
    let src = folder(dir.path());
    let path = dir.path().join("db.lmdb");
    let db = Database::builder().backend(Backend::Lmdb).lmdb_initial_map_size(1 << 20).create(&path).unwrap();
    db.import(&src, &ImportOptions::default().at("/big")).unwrap();
    let back = Array::open(db.store(), "/big/a").unwrap().read_all::<u16>().unwrap();
    assert!(back.iter().enumerate().all(|(i, &v)| v == (i % 65_521) as u16 | 1));
}
