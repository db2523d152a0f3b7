//! The S3 server dies in the middle of an import from it (SeaweedFS killed by its PID, from the
//! import's progress callback, after the first window of values): the import fails after its
//! bounded retries with an error naming the key and the store, and the database is exactly as
//! before. `zarrdb import` from the dead server fails the same way and leaves no database behind.

#[path = "common/s3_data.rs"]
mod s3_data;
#[path = "common/seaweed.rs"]
#[expect(dead_code, reason = "this test runs a server of its own, not the shared one")]
mod seaweed;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zarrdb::error::StoreError;
use zarrdb::store::ObjectStore;
use zarrdb::{Array, ArrayMetadata, DataType, Database, Error, ExportOptions, ImportOptions};

/// Over three windows of values (a window closes at 1024).
const CHUNKS: u64 = 3000;

#[test]
fn the_server_killed_mid_import_leaves_the_database_unchanged() {
    let weed = Arc::new(Mutex::new(seaweed::Weed::start().unwrap()));
    weed.lock().unwrap().set_env();
    // Retries stop after a few seconds, not the default minute.
    std::env::set_var("ZARRDB_S3_RETRY_SECONDS", "3");
    let dir = tempfile::tempdir().unwrap();
    let remote = seaweed::place("import-killed");
    s3_data::database(&dir.path().join("source.zarrdb"), CHUNKS)
        .publish(&ObjectStore::open(&remote).unwrap(), &ExportOptions::default())
        .unwrap();

    let target = dir.path().join("target.zarrdb");
    let db = Database::create(&target).unwrap();
    Array::create(db.store(), "/kept", ArrayMetadata::new(DataType::Int8, vec![3], vec![3]))
        .unwrap()
        .write_region(&[0], &[3], &[1i8, 2, 3])
        .unwrap();
    let before = db.begin_read().unwrap().store().list().unwrap();

    let killer = weed.clone();
    let windows = Arc::new(Mutex::new(0));
    let seen = windows.clone();
    let options = ImportOptions::default().at("/imported").progress(move |_| {
        *seen.lock().unwrap() += 1;
        killer.lock().unwrap().kill();
    });
    let started = Instant::now();
    let error = db.copy_from(Arc::new(ObjectStore::open(&remote).unwrap()), "/", &options).unwrap_err();
    // (The copy reads a window while writing the one before: the kill may come after two.)
    assert!(*windows.lock().unwrap() < 3, "the server died before the last window");
    assert!(started.elapsed() < Duration::from_secs(60), "retries are bounded");
    assert!(
        matches!(&error, Error::Store(StoreError::Engine { backend: "s3", operation: "get", key, .. }) if key.starts_with("many/a/c/")),
        "a failed read of a chunk, naming it: {error:?}"
    );

    let after = db.begin_read().unwrap().store();
    assert_eq!(after.list().unwrap(), before, "nothing of the import is in the database");
    assert_eq!(Array::open(after, "/kept").unwrap().read_all::<i8>().unwrap(), vec![1, 2, 3]);
    drop(db);

    // The command line, against the dead server: a clear error, and no database left behind.
    let created = dir.path().join("created.zarrdb");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zarrdb"))
        .args(["import", &remote, created.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The listing of the whole prefix names the locator (not an empty key).
    assert!(stderr.starts_with(&format!("zarrdb: error: s3 list of \"{remote}\" failed")), "{stderr}");
    assert!(!created.exists(), "a failed import leaves no database");
}
