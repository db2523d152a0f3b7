//! The S3 server dies in the middle of an export to it (SeaweedFS killed by its PID, from the
//! export's progress callback, after the first window of chunks): the export fails with a clear
//! error; once the server is back, the destination holds no root `zarr.json`, so a reader finds
//! no hierarchy there, and the dead export's claim refuses the next export until it overwrites,
//! which then publishes the whole hierarchy.

#[path = "common/s3_data.rs"]
mod s3_data;
#[path = "common/seaweed.rs"]
#[expect(dead_code, reason = "this test runs a server of its own, not the shared one")]
mod seaweed;

use std::sync::{Arc, Mutex};

use zarrdb::error::{StoreError, TransferError};
use zarrdb::store::{ListableStore, ObjectStore, ReadableStore};
use zarrdb::{Array, Error, ExportOptions};

const CHUNKS: u64 = 3000;

#[test]
fn the_server_killed_mid_export_leaves_no_root_document() {
    let weed = Arc::new(Mutex::new(seaweed::Weed::start().unwrap()));
    weed.lock().unwrap().set_env();
    std::env::set_var("ZARRDB_S3_RETRY_SECONDS", "3");
    let dir = tempfile::tempdir().unwrap();
    let db = s3_data::database(&dir.path().join("source.zarrdb"), CHUNKS);
    let remote = seaweed::place("export-killed");

    let killer = weed.clone();
    let options = ExportOptions::default().progress(move |_| killer.lock().unwrap().kill());
    let error = db.publish(&ObjectStore::open(&remote).unwrap(), &options).unwrap_err();
    assert!(
        matches!(&error, Error::Store(StoreError::Engine { backend: "s3", operation: "set", key, .. }) if key.starts_with("many/a/c/")),
        "a failed write of a chunk, naming it: {error:?}"
    );

    weed.lock().unwrap().restart().unwrap();
    let store = ObjectStore::open(&remote).unwrap();
    let keys = store.list().unwrap();
    assert!(keys.iter().any(|k| k.starts_with("many/a/c/")), "the first window of chunks was written: {keys:?}");
    assert_eq!(store.get("zarr.json").unwrap(), None, "no root document: readers find no hierarchy");
    assert_eq!(store.get("many/a/zarr.json").unwrap(), None, "documents come after every chunk");

    let refused = db.publish(&store, &ExportOptions::default()).unwrap_err();
    assert!(matches!(refused, Error::Transfer(TransferError::DestinationBusy { .. })), "{refused:?}");
    db.publish(&store, &ExportOptions::default().overwrite(true)).unwrap();
    let a = Array::open(Arc::new(ObjectStore::open(&remote).unwrap()), "/many/a").unwrap();
    assert_eq!(a.read_all::<u8>().unwrap(), s3_data::values(CHUNKS));
    assert!(store.get("__zarrdb/export").unwrap().is_none(), "the claim is gone");
}
