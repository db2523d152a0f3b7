//! A commit that loses the race for a bucket database's head is committed again over the
//! winner's (its reads still hold): the values its first try uploaded in packs are named again,
//! not uploaded again. On a real S3 server (SeaweedFS on 127.0.0.1) behind a proxy that counts
//! requests: a transaction writing a 256 KiB value is overtaken by another handle's commit before
//! it commits, and its commit uploads one pack in all, with and without history, and the value
//! reads back whole.

#[path = "common/seaweed.rs"]
#[allow(dead_code)]
mod seaweed;

#[path = "common/s3_proxy.rs"]
#[allow(dead_code)]
mod s3_proxy;

use zarrdb::Database;

fn value(seed: u8) -> Vec<u8> {
    (0..256 << 10).map(|i: u32| (i % 251) as u8 ^ seed).collect()
}

/// Pack uploads among the requests.
fn pack_puts(requests: &[String]) -> usize {
    requests.iter().filter(|r| r.starts_with("PUT ") && r.contains("/__zarrdb/packs/")).count()
}

fn overtaken_commit_uploads_its_pack_once(proxy: &s3_proxy::Proxy, history: bool) {
    let locator = format!("zarrdb+{}", seaweed::place(&format!("reuse-{history}")));
    let mut builder = Database::builder();
    builder.history(history);
    let ours = builder.create(&locator).unwrap();
    let theirs = builder.open(&locator).unwrap();

    let txn = ours.begin_write().unwrap();
    txn.store().set("big", &value(1)).unwrap();
    // Another writer moves the head after this transaction began.
    std::thread::spawn(move || theirs.store().set("other", &value(2)).unwrap()).join().unwrap();
    proxy.take();
    txn.commit().unwrap();
    let requests = proxy.take();
    let heads = requests.iter().filter(|r| r.starts_with("PUT ") && r.contains("/__zarrdb/head")).count();
    assert!(heads >= 2, "the commit lost the race once, then won (history {history}): {requests:#?}");
    assert_eq!(pack_puts(&requests), 1, "the value was uploaded once (history {history}): {requests:#?}");
    let fresh = Database::builder().read_only(true).open(&locator).unwrap();
    assert_eq!(fresh.store().get("big").unwrap(), Some(value(1)));
    assert_eq!(fresh.store().get("other").unwrap(), Some(value(2)));
}

#[test]
fn an_overtaken_commit_names_the_packs_it_uploaded() {
    seaweed::server();
    let upstream: u16 = std::env::var("AWS_ENDPOINT").unwrap().rsplit(':').next().unwrap().parse().unwrap();
    let proxy = s3_proxy::Proxy::start(upstream, false);
    std::env::set_var("AWS_ENDPOINT", proxy.endpoint());
    overtaken_commit_uploads_its_pack_once(&proxy, false);
    overtaken_commit_uploads_its_pack_once(&proxy, true);
}
