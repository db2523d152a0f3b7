//! Collections with no grace (`Database::compact_older_than(0)`) run over and over while four
//! writers commit to one bucket database on a real S3 server (SeaweedFS on 127.0.0.1): every
//! writer does a read-modify-write of a shared counter and rewrites a value of its own too long
//! for a manifest page (so it goes into a pack, which the collection may delete). Nothing
//! acknowledged is lost: the counter equals the commits acknowledged, each writer's value is the
//! last it committed, and with history on every version left reads back. A commit in flight when
//! a collection starts is fenced off and uploads its values again (src/store/bucket/collect.rs).
//! `ZARRDB_COLLECT_SECS` sets how long the writers run (default 6).

#[path = "common/seaweed.rs"]
#[allow(dead_code)]
mod seaweed;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zarrdb::db::VersionRef;
use zarrdb::error::TransactionError;
use zarrdb::{Database, Error};

const WRITERS: usize = 4;

fn own_value(writer: usize, round: u64) -> Vec<u8> {
    (0..8192u32).map(|i| (i % 251) as u8 ^ (writer as u8) ^ (round as u8).wrapping_mul(13)).collect()
}

fn run(history: bool) {
    let locator = format!("zarrdb+{}", seaweed::place(&format!("collect-writing-{history}")));
    let secs: u64 = std::env::var("ZARRDB_COLLECT_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(6);
    let open = || Database::builder().history(history).open(&locator).unwrap();
    let first = Database::builder().history(history).create(&locator).unwrap();
    first.store().set("n/shared", &0u64.to_le_bytes()).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let (db, stop, acknowledged) = (open(), stop.clone(), acknowledged.clone());
            std::thread::spawn(move || {
                let mut last = None;
                let mut round = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    round += 1;
                    let txn = db.begin_write().unwrap();
                    let count = txn.store().get("n/shared").unwrap().unwrap();
                    let count = u64::from_le_bytes(count.try_into().unwrap());
                    txn.store().set("n/shared", &(count + 1).to_le_bytes()).unwrap();
                    txn.store().set(&format!("w/{writer}"), &own_value(writer, round)).unwrap();
                    match txn.commit() {
                        Ok(()) => {
                            acknowledged.fetch_add(1, Ordering::Relaxed);
                            last = Some(round);
                        }
                        Err(Error::Transaction(TransactionError::Conflict { key })) => {
                            assert_eq!(key, "n/shared", "a conflict only where reads and writes met");
                        }
                        Err(other) => panic!("writer {writer}: {other}"),
                    }
                }
                last
            })
        })
        .collect();

    let collector = {
        let (db, stop) = (open(), stop.clone());
        std::thread::spawn(move || {
            let mut collections = 0;
            while !stop.load(Ordering::Relaxed) {
                if history {
                    db.expire(&VersionRef::Branch("main".into())).unwrap();
                    db.collect().unwrap();
                }
                db.compact_older_than(Duration::ZERO).unwrap();
                collections += 1;
            }
            collections
        })
    };

    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(secs) {
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::Relaxed);
    let lasts: Vec<Option<u64>> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    let collections = collector.join().unwrap();
    assert!(collections >= 2, "{collections} collections ran beside the writers");

    // One more collection with nothing in flight, then everything read by a fresh handle.
    first.compact_older_than(Duration::ZERO).unwrap();
    let fresh = Database::builder().history(history).read_only(true).open(&locator).unwrap();
    let count = fresh.store().get("n/shared").unwrap().unwrap();
    let acknowledged = acknowledged.load(Ordering::Relaxed);
    assert_eq!(u64::from_le_bytes(count.try_into().unwrap()), acknowledged, "no acknowledged update lost");
    for (writer, last) in lasts.into_iter().enumerate() {
        let held = fresh.store().get(&format!("w/{writer}")).unwrap();
        assert_eq!(held, last.map(|round| own_value(writer, round)), "writer {writer}'s last value");
    }
    if history {
        for info in fresh.log().unwrap() {
            let snapshot = fresh.open_version(&VersionRef::Commit(info.id)).unwrap();
            for key in snapshot.store().list_prefix("").unwrap() {
                snapshot.store().get(&key).unwrap();
            }
        }
        assert!(fresh.check_history().unwrap().is_empty());
    }
    eprintln!("history {history}: {acknowledged} commits acknowledged, {collections} collections beside them");
}

#[test]
fn collections_lose_nothing_of_writers_in_flight() {
    seaweed::server();
    run(false);
}

#[test]
fn collections_lose_nothing_of_writers_in_flight_with_history() {
    seaweed::server();
    run(true);
}
