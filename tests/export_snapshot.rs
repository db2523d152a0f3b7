//! Export reads one snapshot while writers go on. A writer thread commits transactions that set
//! two arrays to the same value k, over and over; exports to a folder and to a zip run meanwhile.
//! Every export must hold one k in both arrays (never one array from one commit and the other
//! from the next), the values must be byte for byte those of the database, and a failed export
//! leaves nothing behind.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use zarrdb::error::TransferError;
use zarrdb::store::{ListableStore, ReadableStore};
use zarrdb::{
    Array, ArrayMetadata, Backend, DataType, Database, DirectoryStore, Error, ExportOptions, Store, ZipStore,
};

/// 1,024 chunks per array: an export reads more than one window, long enough for commits to land
/// meanwhile.
const N: u64 = 4096;

fn setup(backend: Backend, dir: &std::path::Path) -> Database {
    let db = Database::builder().backend(backend).create(dir.join("db")).unwrap();
    let txn = db.begin_write().unwrap();
    for name in ["/pair/a", "/pair/b"] {
        Array::create(txn.store(), name, ArrayMetadata::new(DataType::UInt32, vec![N], vec![4])).unwrap();
    }
    txn.commit().unwrap();
    db
}

/// The one value both arrays hold in `store`, or a description of the tear.
fn pair_value(store: Arc<dyn Store>) -> Result<u32, String> {
    let a = Array::open(store.clone(), "/pair/a").unwrap().read_all::<u32>().unwrap();
    let b = Array::open(store, "/pair/b").unwrap().read_all::<u32>().unwrap();
    let k = a[0];
    if a.iter().chain(&b).all(|&v| v == k) {
        Ok(k)
    } else {
        Err(format!("torn export: a starts {:?}, b starts {:?}", &a[..4], &b[..4]))
    }
}

fn exports_are_snapshots(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let db = setup(backend, dir.path());
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut k = 0u32;
            while !stop.load(Ordering::Relaxed) {
                k += 1;
                let txn = db.begin_write().unwrap();
                for name in ["/pair/a", "/pair/b"] {
                    Array::open(txn.store(), name).unwrap().write_region(&[0], &[N], &vec![k; N as usize]).unwrap();
                }
                txn.commit().unwrap();
            }
            k
        })
    };
    let mut seen = Vec::new();
    for i in 0..3 {
        let folder = dir.path().join(format!("out{i}"));
        db.export(&folder, &ExportOptions::default()).unwrap();
        seen.push(pair_value(Arc::new(DirectoryStore::open(&folder).unwrap())).unwrap());
        let zip = dir.path().join(format!("out{i}.zip"));
        db.export(&zip, &ExportOptions::default().node("/pair")).unwrap();
        let zip_store: Arc<dyn Store> = Arc::new(ZipStore::open(&zip).unwrap());
        let a = Array::open(zip_store.clone(), "/a").unwrap().read_all::<u32>().unwrap();
        let b = Array::open(zip_store, "/b").unwrap().read_all::<u32>().unwrap();
        assert!(a.iter().chain(&b).all(|&v| v == a[0]), "torn zip export");
    }
    stop.store(true, Ordering::Relaxed);
    let last = writer.join().unwrap();
    assert!(last > 1, "the writer made no progress during the exports");
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "exports went back in time: {seen:?}");

    // Quiet now: an export without consolidated metadata (which rewrites the root document)
    // holds exactly the database's keys and values.
    let folder = dir.path().join("final");
    db.export(&folder, &ExportOptions::default().consolidated(false)).unwrap();
    let ours = db.begin_read().unwrap().store();
    let theirs = DirectoryStore::open(&folder).unwrap();
    let keys = ours.list_prefix("").unwrap();
    assert_eq!(keys, theirs.list_prefix("").unwrap());
    for key in keys {
        assert_eq!(ours.get(&key).unwrap(), theirs.get(&key).unwrap(), "{key}");
    }
}

#[test]
fn redb_exports_are_snapshots() {
    exports_are_snapshots(Backend::Redb);
}

#[test]
fn lmdb_exports_are_snapshots() {
    exports_are_snapshots(Backend::Lmdb);
}

#[test]
fn sled_exports_are_snapshots() {
    exports_are_snapshots(Backend::Sled);
}

#[test]
fn refused_exports_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = setup(Backend::Redb, dir.path());
    let taken = dir.path().join("taken");
    std::fs::create_dir(&taken).unwrap();
    let result = db.export(&taken, &ExportOptions::default());
    assert!(matches!(result, Err(Error::Transfer(TransferError::DestinationExists { .. }))), "{result:?}");
    let result = db.export(dir.path().join("none.zip"), &ExportOptions::default().node("/no/such"));
    assert!(matches!(result, Err(Error::Transfer(TransferError::NodeNotFound { .. }))), "{result:?}");
    let mut names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    // The open database's commit log is its own, not an export's.
    names.retain(|n| n != "db-log");
    names.sort();
    assert_eq!(names, ["db", "taken"], "an export left something behind");
}
