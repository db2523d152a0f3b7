//! On the auto-commit store, each array or group operation is one commit: a region write covering
//! many chunks (whole and partial) is never seen half done by readers polling snapshots or the
//! auto-commit store in other threads, and `Array::create` / `Group::create` write the node and
//! all its missing parents at once. Checked on the backends with stable snapshots (redb, LMDB);
//! sled's reads see the live tree, so a long read may mix commits there by design.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Durability, Group, Store};

const STABLE: [Backend; 2] = [Backend::Redb, Backend::Lmdb];

fn fresh(backend: Backend) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder().backend(backend).durability(Durability::Fast).create(dir.path().join("db")).unwrap();
    assert!(db.stable_snapshots());
    (dir, db)
}

/// The region `[4..60, 4..60]` of a 64x64 array of 8x8 chunks: 64 chunks, 28 of them in part.
const OFFSET: [u64; 2] = [4, 4];
const SHAPE: [u64; 2] = [56, 56];

/// Read the region from `store` until `done`; every read holds one value, never a mix, and the
/// values never go back in time. Returns how many reads were made.
fn poll_region(store: impl Fn() -> std::sync::Arc<dyn Store>, done: &AtomicBool, first: mpsc::Sender<()>) -> usize {
    let (mut reads, mut last) = (0, 0u16);
    loop {
        let finished = done.load(Ordering::SeqCst);
        let v = Array::open(store(), "/a").unwrap().read_region::<u16>(&OFFSET, &SHAPE).unwrap();
        assert!(v.iter().all(|x| *x == v[0]), "read {reads} mixes commits: {:?}", v.iter().collect::<BTreeSet<_>>());
        assert!(v[0] >= last, "went back from {last} to {}", v[0]);
        last = v[0];
        reads += 1;
        let _ = first.send(());
        if finished {
            return reads;
        }
    }
}

#[test]
fn region_writes_are_seen_whole_or_not_at_all() {
    for backend in STABLE {
        let (_dir, db) = fresh(backend);
        let meta = ArrayMetadata::new(DataType::UInt16, vec![64, 64], vec![8, 8]);
        let a = Array::create(db.store(), "/a", meta).unwrap();
        a.write_region(&[0, 0], &[64, 64], &vec![u16::MAX; 64 * 64]).unwrap();
        a.write_region(&OFFSET, &SHAPE, &vec![1u16; 56 * 56]).unwrap();
        let done = AtomicBool::new(false);
        let (started_tx, started_rx) = mpsc::channel();
        std::thread::scope(|s| {
            let snapshots = s.spawn({
                let started = started_tx.clone();
                || poll_region(|| db.begin_read().unwrap().store(), &done, started)
            });
            let auto_commit = s.spawn(|| poll_region(|| db.store(), &done, started_tx));
            // Both readers are running before the writes start.
            started_rx.recv().unwrap();
            started_rx.recv().unwrap();
            for generation in 2..=40u16 {
                a.write_region(&OFFSET, &SHAPE, &vec![generation; 56 * 56]).unwrap();
            }
            done.store(true, Ordering::SeqCst);
            assert!(snapshots.join().unwrap() >= 2, "{}", backend.name());
            assert!(auto_commit.join().unwrap() >= 2, "{}", backend.name());
        });
        // The frame around the region was never touched.
        let all = a.read_all::<u16>().unwrap();
        assert_eq!(all.iter().filter(|x| **x == u16::MAX).count(), 64 * 64 - 56 * 56, "{}", backend.name());
        assert_eq!(all.iter().filter(|x| **x == 40).count(), 56 * 56, "{}", backend.name());
    }
}

/// The `zarr.json` keys of the nodes of `/n{i}/...`, as `create_nodes` makes them.
fn node_keys(i: usize) -> Vec<String> {
    let base = format!("n{i}");
    vec![
        format!("{base}/g/arr/zarr.json"),
        format!("{base}/g/zarr.json"),
        format!("{base}/group/with/parents/zarr.json"),
        format!("{base}/group/with/zarr.json"),
        format!("{base}/group/zarr.json"),
        format!("{base}/zarr.json"),
    ]
}

#[test]
fn node_creation_writes_parents_in_the_same_commit() {
    for backend in STABLE {
        let (_dir, db) = fresh(backend);
        let done = AtomicBool::new(false);
        const N: usize = 30;
        std::thread::scope(|s| {
            let reader = s.spawn(|| {
                let mut reads = 0;
                loop {
                    let finished = done.load(Ordering::SeqCst);
                    let keys: BTreeSet<String> = db.begin_read().unwrap().store().list().unwrap().into_iter().collect();
                    for i in 0..N {
                        let base = format!("n{i}/");
                        let mine: Vec<String> = keys.iter().filter(|k| k.starts_with(&base)).cloned().collect();
                        // Array::create then Group::create: nothing, the first's nodes, or all.
                        let all = node_keys(i);
                        let array_only: Vec<String> = all.iter().filter(|k| !k.contains("/group/")).cloned().collect();
                        assert!(mine.is_empty() || mine == array_only || mine == all, "{base}: {mine:?}");
                        assert!(mine.is_empty() || keys.contains("zarr.json"), "root created with the first node");
                    }
                    reads += 1;
                    if finished {
                        return reads;
                    }
                }
            });
            for i in 0..N {
                let meta = ArrayMetadata::new(DataType::UInt8, vec![2], vec![2]);
                Array::create(db.store(), &format!("/n{i}/g/arr"), meta).unwrap();
                Group::create(db.store(), &format!("/n{i}/group/with/parents"), Default::default()).unwrap();
            }
            done.store(true, Ordering::SeqCst);
            assert!(reader.join().unwrap() >= 1);
        });
        let keys = db.store().list().unwrap();
        assert_eq!(keys.len(), 1 + N * 6, "{}: {keys:?}", backend.name());
    }
}
