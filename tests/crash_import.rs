//! An import killed midway leaves the database exactly as it was (the import issue, acceptance 4).
//!
//! A database holding a group and an array gets `zarrdb import SRC DB --at /imported` of a folder
//! of about 1,500 chunks, and the process is killed with SIGKILL at random moments between a
//! fifth and nine tenths of the time a whole import takes on this machine (measured first, and
//! shortened whenever a kill lands after the commit). After
//! each kill the database must open, `zarrdb check` must pass, and every key and value must be
//! what it was before the import, or, when the kill came after the commit, what a whole import
//! leaves. At least one kill must land before the commit.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, DirectoryStore};

#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared generator")]
mod splitmix;

const BIN: &str = env!("CARGO_BIN_EXE_zarrdb");
const KILLS: u32 = 8;

/// A v3 folder with one 1,536-chunk array of incompressible-ish data (so the import writes
/// about 25 MB).
fn make_source(folder: &Path) {
    let store = Arc::new(DirectoryStore::create(folder).unwrap());
    let meta = ArrayMetadata::new(DataType::UInt32, vec![48 * 64, 32 * 64], vec![64, 64]);
    let a = Array::create(store, "/data/values", meta).unwrap();
    let n = 48 * 64 * 32 * 64;
    let mut rng = splitmix::SplitMix::new(7, 0);
    let values: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
    a.write_region(&[0, 0], &[48 * 64, 32 * 64], &values).unwrap();
}

/// Every key and value of the database, through one snapshot.
fn content(backend: Backend, path: &Path) -> BTreeMap<String, Vec<u8>> {
    let db = Database::builder().backend(backend).open(path).expect("the database opens after a kill");
    let store = db.begin_read().unwrap().store();
    let mut out = BTreeMap::new();
    for key in store.list_prefix("").unwrap() {
        out.insert(key.clone(), store.get(&key).unwrap().unwrap());
    }
    out
}

fn make_database(backend: Backend, path: &Path) {
    let db = Database::builder().backend(backend).create(path).unwrap();
    let a = Array::create(db.store(), "/before/a", ArrayMetadata::new(DataType::Int16, vec![10], vec![4])).unwrap();
    a.write_region(&[0], &[10], &(0..10).collect::<Vec<i16>>()).unwrap();
}

fn locator(backend: Backend, path: &Path) -> String {
    format!("{}:{}", backend.name(), path.display())
}

fn import(backend: Backend, source: &Path, db: &Path) -> std::process::Child {
    Command::new(BIN)
        .args(["import", &source.display().to_string(), &locator(backend, db), "--at", "/imported"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn killed_imports_leave_no_trace(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source.zarr");
    make_source(&source);
    let db = dir.path().join("db");
    make_database(backend, &db);
    let before = content(backend, &db);

    // Whole imports, to learn how long one takes here: the shorter of two, since the first also
    // pays for a cold binary and source files, and kills timed on it would all land too late.
    let mut whole = std::time::Duration::MAX;
    let mut imported = BTreeMap::new();
    for attempt in 0..2 {
        let probe = dir.path().join(format!("probe{attempt}"));
        make_database(backend, &probe);
        let start = Instant::now();
        let out = import(backend, &source, &probe).wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        whole = whole.min(start.elapsed());
        imported = content(backend, &probe);
    }
    assert!(imported.len() > before.len() + 1000, "the probe import wrote too little");

    let mut rng = splitmix::SplitMix::new(0x1b9, 0);
    let mut interrupted = 0;
    for kill in 0..KILLS {
        let fraction = 0.2 + 0.7 * rng.range(0, 1000) as f64 / 1000.0;
        let mut child = import(backend, &source, &db);
        std::thread::sleep(whole.mul_f64(fraction));
        let _ = child.kill();
        let _ = child.wait();
        let after = content(backend, &db);
        let check = Command::new(BIN).args(["check", &locator(backend, &db)]).output().unwrap();
        assert!(check.status.success(), "kill {kill}: zarrdb check failed: {}", String::from_utf8_lossy(&check.stdout));
        // The kill may land after the commit (the process was still exiting): then the import
        // must be whole, and the next kill starts from the state before it again.
        if after == imported {
            std::fs::remove_dir_all(&db).or_else(|_| std::fs::remove_file(&db)).unwrap();
            make_database(backend, &db);
            // Imports run faster than measured (a quieter machine): aim earlier from now on.
            whole = whole.mul_f64(0.75);
        } else {
            assert!(after == before, "kill {kill} at {fraction:.2} of an import left part of it");
            interrupted += 1;
        }
    }
    assert!(interrupted > 0, "no kill landed before the import committed");
}

#[test]
fn redb_import_killed_midway_leaves_no_trace() {
    killed_imports_leave_no_trace(Backend::Redb);
}

#[test]
fn lmdb_import_killed_midway_leaves_no_trace() {
    killed_imports_leave_no_trace(Backend::Lmdb);
}

#[test]
fn sled_import_killed_midway_leaves_no_trace() {
    killed_imports_leave_no_trace(Backend::Sled);
}
