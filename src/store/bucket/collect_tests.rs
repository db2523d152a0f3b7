//! Collection on an in-memory bucket: garbage of a lost race and superseded commits goes, the
//! head's objects stay, and nothing younger than the grace is taken.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::BucketEngine;
use crate::error::StoreError;
use crate::store::kv::{KvEngine, WriteBatch};

fn batch(values: &[(&str, usize, u8)]) -> WriteBatch {
    let puts: BTreeMap<String, Option<Vec<u8>>> =
        values.iter().map(|(k, len, b)| (k.to_string(), Some(vec![*b; *len]))).collect();
    WriteBatch { puts, ..WriteBatch::default() }
}

fn objects(engine: &BucketEngine) -> usize {
    let o = &engine.objects;
    ["commits/", "pages/", "packs/"].iter().map(|f| o.block(o.list(f)).unwrap().len()).sum()
}

#[test]
fn garbage_goes_and_the_head_stays() {
    let engine = Arc::new(BucketEngine::open("zarrdb+memory://collect-garbage", true, false).unwrap());
    engine.commit(batch(&[("a", 10_000, 1), ("b", 100, 2)]), true).unwrap();
    engine.commit(batch(&[("a", 20_000, 3)]), true).unwrap();
    // A lost race: its pack, page and record are reachable from nothing.
    let loser = engine.clone().lock_writer().unwrap().unwrap();
    let other = Arc::new(BucketEngine::open("zarrdb+memory://collect-garbage", false, false).unwrap());
    other.commit(batch(&[("c", 30_000, 4)]), true).unwrap();
    let lost = loser.commit(batch(&[("d", 40_000, 5)]), true);
    assert!(matches!(lost, Err(StoreError::HeadMoved { .. })), "{lost:?}");
    let before = objects(&engine);

    let young = engine.collect(Duration::from_secs(3600)).unwrap();
    assert_eq!(young.deleted, 0, "nothing younger than the grace is taken");
    assert_eq!(objects(&engine), before);

    std::thread::sleep(Duration::from_millis(20));
    let done = engine.collect(Duration::ZERO).unwrap();
    assert_eq!(done.commits_kept, 1, "with no grace only the head's commit stays");
    assert!(done.deleted >= 4, "the lost commit's and superseded commits' objects: {done:?}");
    assert_eq!(objects(&engine), before - done.deleted);
    let fresh = BucketEngine::open("zarrdb+memory://collect-garbage", false, true).unwrap();
    let snap = fresh.snapshot().unwrap();
    assert_eq!(snap.get("a").unwrap(), Some(vec![3; 20_000]));
    assert_eq!(snap.get("b").unwrap(), Some(vec![2; 100]));
    assert_eq!(snap.get("c").unwrap(), Some(vec![4; 30_000]));
    assert_eq!(snap.get("d").unwrap(), None);
    assert_eq!(engine.collect(Duration::ZERO).unwrap().deleted, 0, "a second collection finds nothing");
}
