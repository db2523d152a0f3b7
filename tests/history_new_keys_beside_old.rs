//! A commit that writes runs of new keys between keys that hold values, on every backend: each
//! key that held a value keeps it for the versions that read it, and the new ones are recorded
//! as added. Both ways a commit reaches the history layer: a transaction's batch, and a region
//! write large enough to stream (a bulk write, as imports do).
//!
//! (Written for a build that skipped the lookup of each new key by seeking once for the next key
//! that exists; that build made no measurable difference and was not kept: docs/benchmarks.md,
//! stop 39.)

use zarrdb::db::VersionRef;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database};

fn main_ref() -> VersionRef {
    VersionRef::Branch("main".into())
}

fn history_db(backend: Backend, dir: &tempfile::TempDir) -> Database {
    Database::builder().backend(backend).history(true).create(dir.path().join("g.zarrdb")).unwrap()
}

#[test]
fn a_transaction_of_new_keys_around_old_ones_keeps_the_old_values() {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let dir = tempfile::tempdir().unwrap();
        let db = history_db(backend, &dir);
        // Old keys at the end of a run of new ones, at its start, alone, one large.
        let old = ["k/2", "k/5", "k/6", "k/9", "m"];
        let txn = db.begin_write().unwrap();
        for key in old {
            let len = if key == "k/9" { 10_000 } else { 3 };
            txn.store().set(key, &vec![key.len() as u8; len]).unwrap();
        }
        txn.commit().unwrap();
        let before = db.tag("before", &main_ref()).unwrap();

        let txn = db.begin_write().unwrap();
        let all: Vec<String> = (0..12).map(|i| format!("k/{i}")).chain(["l".into(), "m".into(), "z".into()]).collect();
        for key in &all {
            txn.store().set(key, format!("new {key}").as_bytes()).unwrap();
        }
        txn.commit().unwrap();

        let then = db.open_version(&VersionRef::Commit(before)).unwrap();
        for key in &all {
            let expected =
                old.contains(&key.as_str()).then(|| vec![key.len() as u8; if key == "k/9" { 10_000 } else { 3 }]);
            assert_eq!(then.store().get(key).unwrap(), expected, "{backend:?}: {key} before");
            assert_eq!(db.store().get(key).unwrap(), Some(format!("new {key}").into_bytes()), "{backend:?}: {key}");
        }
        let changed = db.diff(&VersionRef::Commit(before), &main_ref()).unwrap();
        let rewritten: Vec<&str> = changed.iter().filter(|c| c.before.is_some()).map(|c| c.key.as_str()).collect();
        assert_eq!(rewritten, old, "{backend:?}");
        assert_eq!(changed.len(), all.len(), "{backend:?}");
        assert_eq!(db.check_history().unwrap(), [], "{backend:?}");
    }
}

#[test]
fn a_streamed_write_over_a_few_chunks_keeps_what_they_held() {
    const CHUNK: u64 = 4096;
    const CHUNKS: u64 = 4200; // more than the 16 MiB a region write needs to stream
    let written = [0, 3, 4, 10, 700, CHUNKS - 1];
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let dir = tempfile::tempdir().unwrap();
        let db = history_db(backend, &dir);
        let meta = ArrayMetadata::new(DataType::UInt8, vec![CHUNK * CHUNKS], vec![CHUNK]);
        let a = Array::create(db.store(), "/a", meta).unwrap();
        let txn = db.begin_write().unwrap();
        let in_txn = Array::open(txn.store(), "/a").unwrap();
        for &c in &written {
            in_txn.write_region(&[c * CHUNK], &[CHUNK], &vec![1u8; CHUNK as usize]).unwrap();
        }
        txn.commit().unwrap();
        let before = db.tag("before", &main_ref()).unwrap();

        let whole: Vec<u8> = (0..CHUNK * CHUNKS).map(|i| (i % 241) as u8 + 2).collect();
        a.write_region(&[0], &[CHUNK * CHUNKS], &whole).unwrap();

        let then = Array::open(db.open_version(&VersionRef::Commit(before)).unwrap().store(), "/a").unwrap();
        let old: Vec<u8> = then.read_region(&[0], &[CHUNK * CHUNKS]).unwrap();
        for c in 0..CHUNKS {
            let part = &old[(c * CHUNK) as usize..((c + 1) * CHUNK) as usize];
            let held = if written.contains(&c) { 1 } else { 0 };
            assert!(part.iter().all(|&v| v == held), "{backend:?}: chunk {c} of the old version");
        }
        assert_eq!(a.read_region::<u8>(&[0], &[CHUNK * CHUNKS]).unwrap(), whole, "{backend:?}");
        let changed = db.diff(&VersionRef::Commit(before), &main_ref()).unwrap();
        assert_eq!(changed.len() as u64, CHUNKS, "{backend:?}");
        let rewritten: Vec<String> = changed.iter().filter(|c| c.before.is_some()).map(|c| c.key.clone()).collect();
        let mut expected: Vec<String> = written.iter().map(|c| format!("a/c/{c}")).collect();
        expected.sort(); // key order
        assert_eq!(rewritten, expected, "{backend:?}");
        assert_eq!(db.check_history().unwrap(), [], "{backend:?}");
    }
}
