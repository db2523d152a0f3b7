//! A branch's head stays readable while collections fold the commits of `main` it stands on.
//!
//! A branch handle's snapshot folds the branch's records down to where it meets `main`'s
//! ancestry and `main`'s records below that. Where the engine's snapshots are fixed (redb, LMDB)
//! the fold reads one state; sled's reads see the live tree, so a collection step committing in
//! the middle of a fold must not make the open fail or mix two states (a value of a version
//! collected after the open is refused as expired, as sled's snapshots document). One thread moves the
//! branch up `main` and collects what it leaves behind, round after round; another opens the
//! branch's head over and over and checks every key holds the value of one round.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use zarrdb::db::VersionRef;
use zarrdb::error::StoreError;
use zarrdb::{Backend, Database};

const KEYS: usize = 12;
const ROUNDS: u64 = 40;

fn write_round(db: &Database, round: u64, commits: u64) {
    for i in 0..commits {
        let txn = db.begin_write().unwrap();
        let value = format!("{round}:{i}").into_bytes();
        for k in 0..KEYS {
            txn.store().set(&format!("k/{k}"), &value).unwrap();
        }
        txn.commit().unwrap();
    }
}

fn reads_stay_whole(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder().backend(backend).history(true).create(dir.path().join("b.db")).unwrap();
    write_round(&db, 0, 5);
    db.create_branch("dev", &VersionRef::Branch("main".into())).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let reader = {
        let (db, done, reads) = (db.clone(), done.clone(), reads.clone());
        std::thread::spawn(move || {
            let dev = db.on_branch("dev").unwrap();
            while !done.load(Ordering::Relaxed) {
                let snapshot = dev.begin_read().unwrap_or_else(|e| panic!("{}: open dev: {e}", backend.name()));
                let store = snapshot.store();
                let mut values = Vec::with_capacity(KEYS);
                for k in 0..KEYS {
                    let key = format!("k/{k}");
                    match store.get(&key) {
                        Ok(value) => values.push(value.unwrap()),
                        // sled's snapshots are not fixed (`Database::stable_snapshots`): a
                        // version that moved off the branch may lose its values to a collection
                        // while it is read, and says so.
                        Err(StoreError::VersionExpired { .. }) if backend == Backend::Sled => break,
                        Err(e) => panic!("{}: {key}: {e}", backend.name()),
                    }
                }
                if values.len() < KEYS {
                    continue;
                }
                assert!(values.iter().all(|v| v == &values[0]), "{}: a torn read of dev: {values:?}", backend.name());
                reads.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let mut collected = 0;
    for round in 1..=ROUNDS {
        write_round(&db, round, 6);
        // dev moves up to main's head: the commits below it are no longer kept by it.
        db.reset("dev", &VersionRef::Branch("main".into())).unwrap();
        db.expire(&VersionRef::Branch("main".into())).unwrap();
        collected += db.collect().unwrap().versions;
    }
    done.store(true, Ordering::Relaxed);
    reader.join().unwrap();
    assert!(collected >= ROUNDS * 5, "{}: collected {collected} versions", backend.name());
    assert!(reads.load(Ordering::Relaxed) > 0);
    assert!(db.check_history().unwrap().is_empty());
}

#[test]
fn sled_branch_reads_during_collection() {
    reads_stay_whole(Backend::Sled);
}

#[test]
fn lmdb_branch_reads_during_collection() {
    reads_stay_whole(Backend::Lmdb);
}

#[test]
fn redb_branch_reads_during_collection() {
    reads_stay_whole(Backend::Redb);
}
