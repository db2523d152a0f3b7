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
    // The collection's fence: a commit record over the same pages.
    assert_eq!(objects(&engine), before + 1);

    std::thread::sleep(Duration::from_millis(20));
    let done = engine.collect(Duration::ZERO).unwrap();
    // The fence, and the head it superseded when that was within the cut-off's millisecond.
    assert!((1..=2).contains(&done.commits_kept), "with no grace the fence's commit stays: {done:?}");
    assert!(done.deleted >= 4, "the lost commit's and superseded commits' objects: {done:?}");
    assert_eq!(objects(&engine), before + 2 - done.deleted);
    let kept_records = engine.objects.block(engine.objects.list("commits/")).unwrap().len();
    assert_eq!(kept_records, done.commits_kept);
    let fresh = BucketEngine::open("zarrdb+memory://collect-garbage", false, true).unwrap();
    let snap = fresh.snapshot().unwrap();
    assert_eq!(snap.get("a").unwrap(), Some(vec![3; 20_000]));
    assert_eq!(snap.get("b").unwrap(), Some(vec![2; 100]));
    assert_eq!(snap.get("c").unwrap(), Some(vec![4; 30_000]));
    assert_eq!(snap.get("d").unwrap(), None);
    std::thread::sleep(Duration::from_millis(20));
    let again = engine.collect(Duration::ZERO).unwrap();
    // Only the records of earlier fences (their pages are the head's).
    assert!(again.deleted <= 2, "{again:?}");
    assert_eq!(engine.snapshot().unwrap().get("a").unwrap(), Some(vec![3; 20_000]));
}

#[test]
fn a_commit_tried_again_after_a_fence_uploads_its_values_again() {
    let place = "zarrdb+memory://collect-fence";
    let engine = Arc::new(BucketEngine::open(place, true, false).unwrap());
    engine.commit(batch(&[("a", 100, 1)]), true).unwrap();
    // A commit loses the race: its pack is kept for its next try.
    let loser = engine.clone().lock_writer().unwrap().unwrap();
    let other = Arc::new(BucketEngine::open(place, false, false).unwrap());
    other.commit(batch(&[("b", 100, 2)]), true).unwrap();
    let lost = loser.commit(batch(&[("big", 50_000, 7)]), true);
    assert!(matches!(lost, Err(StoreError::HeadMoved { .. })), "{lost:?}");
    // A collection with no grace fences the head and deletes that pack: no commit names it.
    std::thread::sleep(Duration::from_millis(20));
    let done = other.collect(Duration::ZERO).unwrap();
    assert!(done.deleted >= 1, "{done:?}");
    // The next try must not name the deleted pack.
    engine.commit(batch(&[("big", 50_000, 7)]), true).unwrap();
    let fresh = BucketEngine::open(place, false, true).unwrap();
    let snap = fresh.snapshot().unwrap();
    assert_eq!(snap.get("big").unwrap(), Some(vec![7; 50_000]));
    assert_eq!(snap.get("a").unwrap(), Some(vec![1; 100]));
    assert_eq!(snap.get("b").unwrap(), Some(vec![2; 100]));
}

#[test]
fn a_commit_tried_again_without_a_fence_names_its_packs() {
    let place = "zarrdb+memory://collect-no-fence";
    let engine = Arc::new(BucketEngine::open(place, true, false).unwrap());
    engine.commit(batch(&[("a", 100, 1)]), true).unwrap();
    let loser = engine.clone().lock_writer().unwrap().unwrap();
    let other = Arc::new(BucketEngine::open(place, false, false).unwrap());
    other.commit(batch(&[("b", 100, 2)]), true).unwrap();
    assert!(loser.commit(batch(&[("big", 50_000, 7)]), true).is_err());
    let packs = |e: &BucketEngine| e.objects.block(e.objects.list("packs/")).unwrap().len();
    let before = packs(&engine);
    engine.commit(batch(&[("big", 50_000, 7)]), true).unwrap();
    assert_eq!(packs(&engine), before, "the kept pack is named, not uploaded again");
    assert_eq!(engine.snapshot().unwrap().get("big").unwrap(), Some(vec![7; 50_000]));
}

#[test]
fn an_import_whose_uploads_a_collection_deleted_does_not_land() {
    let place = "zarrdb+memory://collect-import";
    let engine = Arc::new(BucketEngine::open(place, true, false).unwrap());
    engine.commit(batch(&[("a", 100, 1)]), true).unwrap();
    // An import uploads a value longer than a pack at once, before it commits.
    let mut import = engine.clone().bulk(0).unwrap();
    import.put(vec![("big".into(), vec![9; super::PACK_BYTES + 1])]).unwrap();
    let packs = |e: &BucketEngine| e.objects.block(e.objects.list("packs/")).unwrap().len();
    // The upload runs in the background: wait for it (bounded).
    let began = std::time::Instant::now();
    while packs(&engine) == 0 && began.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(packs(&engine), 1, "the import's pack is uploaded");
    std::thread::sleep(Duration::from_millis(20));
    let other = BucketEngine::open(place, false, false).unwrap();
    other.collect(Duration::ZERO).unwrap();
    assert_eq!(packs(&engine), 0, "no commit names the import's pack yet: the collection deletes it");
    // The collection fenced the head: the import cannot land naming the deleted pack.
    let landed = import.commit(true);
    assert!(matches!(landed, Err(StoreError::HeadMoved { .. })), "{landed:?}");
    let snap = BucketEngine::open(place, false, true).unwrap().snapshot().unwrap();
    assert_eq!(snap.get("big").unwrap(), None);
    assert_eq!(snap.get("a").unwrap(), Some(vec![1; 100]));
}
