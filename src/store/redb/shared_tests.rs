//! The shared commit log of redb's multi-writer mode against a model: three handles of one file
//! (each with its own file descriptions, as three processes would have) commit random batches
//! through the log, through checkpoints (batches too large for it), through held write
//! transactions and imports, and are reopened; every read of every handle, and of a read-only
//! handle, is compared with a `BTreeMap`. A second test races a reader against a writer whose
//! checkpoints keep starting the log again.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::store::kv::{KvEngine, KvSnapshot, WriteBatch};
use crate::store::pending::tests::Rng;
use crate::store::redb::{RedbEngine, RedbOptions};

const MULTI: RedbOptions = RedbOptions {
    cache_size: None,
    verify: false,
    multi_writer: true,
    commit_log: false,
    read_only: false,
    // Small, so that commits often do not fit and checkpoints start the log again.
    shared_log_capacity: 128 << 10,
};

fn open(path: &Path, create: bool) -> Arc<RedbEngine> {
    Arc::new(RedbEngine::open(path, create, MULTI).unwrap())
}

fn key(rng: &mut Rng) -> String {
    format!("{}/{}", ["a", "b", "c"][rng.below(3)], rng.below(12))
}

/// A value whose length sends most batches through the log and some past its capacity.
fn value(rng: &mut Rng, step: usize) -> Vec<u8> {
    let len = match rng.below(20) {
        0 => 150 << 10,
        1..=4 => 9000 + rng.below(9000),
        _ => rng.below(3000),
    };
    (0..len).map(|i| (i + step) as u8).collect()
}

fn batch(rng: &mut Rng, step: usize) -> WriteBatch {
    let mut batch = WriteBatch::default();
    if rng.below(12) == 0 {
        batch.erased_prefixes.push(format!("{}/", ["a", "b", "c"][rng.below(3)]));
    }
    for _ in 0..1 + rng.below(3) {
        let value = (rng.below(4) != 0).then(|| value(rng, step));
        batch.puts.insert(key(rng), value);
    }
    batch
}

fn apply(model: &mut BTreeMap<String, Vec<u8>>, batch: &WriteBatch) {
    for prefix in &batch.erased_prefixes {
        model.retain(|k, _| !k.starts_with(prefix.as_str()));
    }
    for (k, v) in &batch.puts {
        match v {
            Some(v) => model.insert(k.clone(), v.clone()),
            None => model.remove(k),
        };
    }
}

/// Every key outside zarrdb's own, and its value, as `snapshot` reads them.
fn read_all(snapshot: &dyn KvSnapshot) -> BTreeMap<String, Vec<u8>> {
    let keys = snapshot.keys("").unwrap();
    let mut next = String::new();
    let mut walked = Vec::new();
    while let Some(k) = snapshot.next_key(&next, "").unwrap() {
        next = format!("{k}\0");
        walked.push(k);
    }
    assert_eq!(keys, walked, "keys() and next_key() agree");
    keys.into_iter()
        .filter(|k| !k.starts_with("__zarrdb/"))
        .map(|k| {
            let v = snapshot.get(&k).unwrap().unwrap();
            assert_eq!(snapshot.size(&k).unwrap(), Some(v.len() as u64), "{k}");
            (k, v)
        })
        .collect()
}

#[test]
fn three_handles_commit_through_the_shared_log_as_a_model_says() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.redb");
    let mut handles = vec![open(&path, true), open(&path, false), open(&path, false)];
    let mut model = BTreeMap::new();
    let mut rng = Rng(0x5eed_1234_abcd);
    for step in 0..600 {
        let h = rng.below(handles.len());
        match rng.below(10) {
            0..=4 => {
                let batch = batch(&mut rng, step);
                apply(&mut model, &batch);
                handles[h].commit(batch, rng.below(3) != 0).unwrap();
            }
            5 => {
                // A transaction's hold: the lock through its snapshot to its commit.
                let writer = handles[h].clone().lock_writer().unwrap().expect("multi-writer mode holds the lock");
                let other = (h + 1) % handles.len();
                assert_eq!(
                    read_all(handles[other].snapshot().unwrap().as_ref()),
                    model,
                    "step {step}, beside a writer"
                );
                let batch = batch(&mut rng, step);
                apply(&mut model, &batch);
                writer.commit(batch, true).unwrap();
            }
            6 => {
                let mut bulk = handles[h].clone().bulk(0).unwrap();
                let (k, v) = (key(&mut rng), value(&mut rng, step));
                bulk.put(vec![(k.clone(), v.clone())]).unwrap();
                model.insert(k, v);
                bulk.commit(true).unwrap();
            }
            7 => {
                handles[h] = open(&path, false);
            }
            8 => {
                let reader = RedbEngine::open(&path, false, RedbOptions { read_only: true, ..MULTI }).unwrap();
                assert_eq!(read_all(reader.snapshot().unwrap().as_ref()), model, "step {step}, read-only");
            }
            _ => {}
        }
        let seen = read_all(handles[rng.below(handles.len())].snapshot().unwrap().as_ref());
        assert_eq!(seen.keys().collect::<Vec<_>>(), model.keys().collect::<Vec<_>>(), "step {step}");
        assert!(seen == model, "step {step}: values differ");
    }
    drop(handles);
    // Closed, the file holds everything: the single-process mode reads it after replaying.
    let single =
        RedbEngine::open(&path, false, RedbOptions { multi_writer: false, commit_log: true, ..MULTI }).unwrap();
    assert!(read_all(single.snapshot().unwrap().as_ref()) == model, "after the close");
}

#[test]
fn a_reader_beside_checkpoints_sees_every_acknowledged_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.redb");
    let (writer, reader) = (open(&path, true), open(&path, false));
    let acknowledged = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let filler = |n: u64| vec![n as u8; 7000 + (n % 13) as usize];
    let writing = {
        let (acknowledged, done) = (acknowledged.clone(), done.clone());
        std::thread::spawn(move || {
            for n in 1..=1500u64 {
                let mut batch = WriteBatch::default();
                batch.puts.insert("n".into(), Some(n.to_le_bytes().to_vec()));
                batch.puts.insert(format!("f/{}", n % 40), Some(filler(n)));
                writer.commit(batch, true).unwrap();
                acknowledged.store(n, Ordering::Release);
            }
            done.store(true, Ordering::Release);
        })
    };
    let mut reads = 0;
    while !done.load(Ordering::Acquire) {
        let before = acknowledged.load(Ordering::Acquire);
        let snapshot = reader.snapshot().unwrap();
        let n = snapshot.get("n").unwrap().map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap()));
        assert!(n >= before, "a snapshot taken after commit {before} was acknowledged holds only {n}");
        if n > 0 {
            assert_eq!(snapshot.get(&format!("f/{}", n % 40)).unwrap(), Some(filler(n)), "commit {n} whole");
        }
        reads += 1;
    }
    writing.join().unwrap();
    assert!(reads > 10, "the reader ran beside the writer ({reads} reads)");
}
