//! Push and pull between a local database and a bucket database (`Database::mirror_into`) on a
//! real S3 server (SeaweedFS on 127.0.0.1), every request counted by a proxy in front of it: a
//! local database with 20 versions, tags, a branch and a merge pushed into a new bucket database
//! and pulled back into a new file is identical to it (every branch's log, every version, every
//! tag); a second push after one new commit uploads one pack, holding that commit's values alone,
//! and no more than one commit's worth of other objects; a bucket database that another writer
//! committed to is refused for the push, with nothing uploaded but what the check reads.

#[path = "common/seaweed.rs"]
#[allow(dead_code)]
mod seaweed;

#[path = "common/s3_proxy.rs"]
#[allow(dead_code)]
mod s3_proxy;

#[path = "common/history.rs"]
#[allow(dead_code)]
mod history;

use zarrdb::error::HistoryError;
use zarrdb::{Array, Backend, Database, Error};

/// The uploads among `requests`: (object path, body length).
fn puts(requests: &[String]) -> Vec<(String, u64)> {
    requests
        .iter()
        .filter_map(|r| {
            let mut words = r.split(' ');
            let (method, path, _, length) = (words.next()?, words.next()?, words.next()?, words.next()?);
            (method == "PUT").then(|| (path.to_owned(), length.parse().unwrap()))
        })
        .collect()
}

fn packs(puts: &[(String, u64)]) -> Vec<u64> {
    puts.iter().filter(|(path, _)| path.contains("/__zarrdb/packs/")).map(|(_, len)| *len).collect()
}

#[test]
fn push_and_pull_through_a_bucket() {
    let locator = format!("zarrdb+{}", seaweed::bucket("push-pull"));
    let upstream: u16 = std::env::var("AWS_ENDPOINT").unwrap().rsplit(':').next().unwrap().parse().unwrap();
    let proxy = s3_proxy::Proxy::start(upstream, false);
    std::env::set_var("AWS_ENDPOINT", proxy.endpoint());

    let dir = tempfile::tempdir().unwrap();
    let local = history::open(&dir.path().join("local.zarrdb"), Backend::Redb);
    history::twenty_versions(&local);
    assert!(local.log().unwrap().len() >= 20);
    let bucket = Database::builder().history(true).create(&locator).unwrap();

    proxy.take();
    let first = local.mirror_into(&bucket).unwrap();
    let first_puts = puts(&proxy.take());
    history::assert_same_history(&local, &bucket);
    let pulled = history::open(&dir.path().join("pulled.zarrdb"), Backend::Redb);
    bucket.mirror_into(&pulled).unwrap();
    history::assert_same_history(&local, &pulled);
    // A reader opening the bucket afresh sees it too.
    let reader = Database::builder().read_only(true).open(&locator).unwrap();
    history::assert_same_history(&local, &reader);
    drop(reader);

    // One commit rewriting one chunk of 4,000 bytes.
    let a = Array::open(local.store(), "/a").unwrap();
    a.write_region(&[2000], &[1000], &[5u32; 1000]).unwrap();
    proxy.take();
    let second = local.mirror_into(&bucket).unwrap();
    let requests = proxy.take();
    let second_puts = puts(&requests);
    assert_eq!(second.commits, 1, "{second:?}");
    let (first_packs, second_packs) = (packs(&first_puts), packs(&second_puts));
    assert!(!first_packs.is_empty(), "{first_puts:?}");
    // The new value (and the old one, copied to where older versions read it): one pack of at
    // most that commit's bytes.
    assert_eq!(second_packs.len(), 1, "{second_puts:?}");
    assert!(second_packs[0] <= second.bytes_written && second.bytes_written < 10_000, "{second:?} {second_puts:?}");
    // Besides the pack: changed manifest pages, the commit record, the head.
    assert!(second_puts.len() <= 6, "{second_puts:?}");
    println!(
        "first push: {first:?}, {} uploads ({} packs, {} bytes); second push: {second:?}, {} requests, {} uploads ({} pack bytes)",
        first_puts.len(),
        first_packs.len(),
        first_puts.iter().map(|(_, n)| n).sum::<u64>(),
        requests.len(),
        second_puts.len(),
        second_packs[0]
    );
    bucket.mirror_into(&pulled).unwrap();
    history::assert_same_history(&local, &pulled);

    // Another writer commits to the bucket database: the next push would lose that commit.
    let other = Database::open(&locator).unwrap();
    other.store().set("theirs/zarr.json", br#"{"zarr_format":3,"node_type":"group"}"#).unwrap();
    drop(other);
    a.write_region(&[0], &[1], &[1u32]).unwrap();
    proxy.take();
    match local.mirror_into(&bucket) {
        Err(Error::History(HistoryError::Diverged { .. })) => {}
        other => panic!("a push over another writer's commit: {other:?}"),
    }
    assert_eq!(puts(&proxy.take()), vec![], "a refused push uploads nothing");
    // Pulled first, the bucket's commit comes along and then nothing is refused.
    let merged = history::open(&dir.path().join("theirs.zarrdb"), Backend::Redb);
    bucket.mirror_into(&merged).unwrap();
    assert!(merged.store().get("theirs/zarr.json").unwrap().is_some());
}
