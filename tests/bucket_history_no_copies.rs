//! A bucket database with history keeps every version without storing a value twice: a value too
//! long for its manifest page (over 2 KiB) is in a pack once, and a commit that supersedes it
//! uploads only the new values, where copying the old value out for the versions that still read
//! it would upload it again. On a real S3 server (SeaweedFS on 127.0.0.1) behind a proxy that
//! counts the bytes of every upload: rewriting ten 4 KiB values a commit uploads packs of about
//! 40 KiB a commit, not 80; a 2,000-byte value rewritten uploads no pack; every version reads back.

#[path = "common/seaweed.rs"]
#[allow(dead_code)]
mod seaweed;

#[path = "common/s3_proxy.rs"]
#[allow(dead_code)]
mod s3_proxy;

use zarrdb::db::VersionRef;
use zarrdb::Database;

const KEYS: usize = 10;
const ROUNDS: u8 = 6;

fn value(len: usize, key: usize, round: u8) -> Vec<u8> {
    (0..len).map(|i| (i % 241) as u8 ^ (key as u8).wrapping_mul(31) ^ round.wrapping_mul(7)).collect()
}

/// The bytes of the pack uploads among `requests` ("METHOD path HTTP/1.1 LENGTH").
fn pack_bytes(requests: &[String]) -> u64 {
    requests
        .iter()
        .filter(|r| r.starts_with("PUT ") && r.contains("/__zarrdb/packs/"))
        .map(|r| r.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum()
}

#[test]
fn superseded_values_are_not_uploaded_again() {
    seaweed::server();
    let upstream: u16 = std::env::var("AWS_ENDPOINT").unwrap().rsplit(':').next().unwrap().parse().unwrap();
    let proxy = s3_proxy::Proxy::start(upstream, false);
    std::env::set_var("AWS_ENDPOINT", proxy.endpoint());
    let locator = format!("zarrdb+{}", seaweed::place("history-no-copies"));
    let db = Database::builder().history(true).create(&locator).unwrap();

    for round in 0..ROUNDS {
        proxy.take();
        let txn = db.begin_write().unwrap();
        for key in 0..KEYS {
            txn.store().set(&format!("c/{key}"), &value(4096, key, round)).unwrap();
        }
        txn.commit().unwrap();
        let uploaded = pack_bytes(&proxy.take());
        let new = (KEYS * 4096) as u64;
        // The new values, and nothing of the values they supersede (a little for framing).
        assert!(
            (new..new + new / 10).contains(&uploaded),
            "round {round}: {uploaded} bytes of packs for {new} bytes of new values"
        );
    }

    // A short value (with its 24-byte entry, within the 2 KiB a page holds) lives in the manifest
    // page: rewriting it uploads no pack at all.
    for round in 0..3 {
        proxy.take();
        db.store().set("short", &value(2000, 0, round)).unwrap();
        assert_eq!(pack_bytes(&proxy.take()), 0, "round {round} of the 2,000-byte value");
    }

    // Every version reads what it was given, from a handle opened afresh.
    let fresh = Database::builder().read_only(true).open(&locator).unwrap();
    let log = fresh.log().unwrap();
    let mut rounds_seen = 0;
    for info in log.iter().rev() {
        let snapshot = fresh.open_version(&VersionRef::Commit(info.id)).unwrap();
        let store = snapshot.store();
        let Some(first) = store.get("c/0").unwrap() else { continue };
        let round = (0..ROUNDS).find(|&r| value(4096, 0, r) == first).expect("a round's value");
        for key in 0..KEYS {
            assert_eq!(store.get(&format!("c/{key}")).unwrap(), Some(value(4096, key, round)), "{}", info.id);
        }
        rounds_seen += 1;
    }
    assert!(rounds_seen >= usize::from(ROUNDS), "{rounds_seen} versions hold the values");
    assert_eq!(fresh.store().get("short").unwrap(), Some(value(2000, 0, 2)));
    assert!(fresh.check_history().unwrap().is_empty());
}
