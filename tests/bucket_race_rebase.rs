//! Two handles on one bucket database (`zarrdb+memory://`: the engine of `zarrdb+s3://` over an
//! in-memory object store), each with an engine of its own as two processes would have. A commit
//! that loses the race for the head is committed again over the winner's when every read it made
//! answers the same there (a rebase), and fails with `TransactionError::Conflict` naming the key
//! otherwise; no update is lost either way.

use std::sync::atomic::{AtomicU64, Ordering};

use zarrdb::db::VersionRef;
use zarrdb::error::TransactionError;
use zarrdb::{Array, ArrayMetadata, DataType, Database, Error};

fn locator(name: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("zarrdb+memory://race-{name}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

fn two_handles(name: &str, history: bool) -> (Database, Database) {
    let at = locator(name);
    let a = Database::builder().history(history).create(&at).unwrap();
    let b = Database::builder().history(history).open(&at).unwrap();
    (a, b)
}

fn conflict_key(result: Result<(), Error>) -> String {
    match result {
        Err(Error::Transaction(TransactionError::Conflict { key })) => key,
        other => panic!("expected a conflict, got {other:?}"),
    }
}

#[test]
fn a_read_changed_by_the_winner_is_a_conflict() {
    let (a, b) = two_handles("read", false);
    a.store().set("k", b"0").unwrap();
    let txn = a.begin_write().unwrap();
    assert_eq!(txn.store().get("k").unwrap().as_deref(), Some(&b"0"[..]));
    b.store().set("k", b"1").unwrap();
    txn.store().set("out", b"from a").unwrap();
    assert_eq!(conflict_key(txn.commit()), "k");
    assert_eq!(b.store().get("out").unwrap(), None, "nothing of the losing commit was applied");
    assert_eq!(a.store().get("k").unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn a_listing_changed_by_the_winner_is_a_conflict() {
    let (a, b) = two_handles("list", false);
    a.store().set("p/1", b"x").unwrap();
    let txn = a.begin_write().unwrap();
    assert_eq!(txn.store().list_prefix("p/").unwrap(), vec!["p/1"]);
    b.store().set("p/2", b"y").unwrap();
    txn.store().set("count", b"1").unwrap();
    assert!(conflict_key(txn.commit()).starts_with("p/"));
    assert_eq!(a.store().get("count").unwrap(), None);
}

#[test]
fn disjoint_commits_rebase_and_keep_both_in_history() {
    let (a, b) = two_handles("rebase", true);
    a.store().set("x", b"x0").unwrap();
    let txn = a.begin_write().unwrap();
    assert_eq!(txn.store().get("x").unwrap().as_deref(), Some(&b"x0"[..]));
    txn.store().set("y", b"from a").unwrap();
    b.store().set("z", b"from b").unwrap();
    let winner = b.log().unwrap()[0].id;
    txn.commit().unwrap();
    for (key, want) in [("x", "x0"), ("y", "from a"), ("z", "from b")] {
        assert_eq!(b.store().get(key).unwrap().as_deref(), Some(want.as_bytes()), "{key}");
    }
    let log = a.log().unwrap();
    assert_eq!(log[0].parent, Some(winner), "the rebased commit follows the winner's");
    let before = a.open_version(&VersionRef::Commit(winner)).unwrap();
    assert_eq!(before.store().get("y").unwrap(), None, "the winner's version is as it committed");
    assert_eq!(before.store().get("z").unwrap().as_deref(), Some(&b"from b"[..]));
}

/// Threads on two handles add to shared counters in transactions (retrying on conflicts) and
/// write cells of one chunk with region writes: every acknowledged increment and write is there.
#[test]
fn no_update_is_lost() {
    let (a, b) = two_handles("counters", false);
    let meta = ArrayMetadata::new(DataType::Int64, vec![16], vec![16]);
    Array::create(a.store(), "/cells", meta).unwrap();
    a.store().set("counter", &0u64.to_le_bytes()).unwrap();
    let conflicts = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            let db = if t % 2 == 0 { a.clone() } else { b.clone() };
            let conflicts = &conflicts;
            scope.spawn(move || {
                let cells = Array::open(db.store(), "/cells").unwrap();
                for i in 0..20u64 {
                    loop {
                        let txn = db.begin_write().unwrap();
                        let now = txn.store().get("counter").unwrap().unwrap();
                        let next = u64::from_le_bytes(now.try_into().unwrap()) + 1;
                        txn.store().set("counter", &next.to_le_bytes()).unwrap();
                        match txn.commit() {
                            Ok(()) => break,
                            Err(Error::Transaction(TransactionError::Conflict { .. })) => {
                                conflicts.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => panic!("{e}"),
                        }
                    }
                    let cell = t * 4 + i % 4;
                    cells.write_region(&[cell], &[1], &[(t * 100 + i) as i64]).unwrap();
                }
            });
        }
    });
    let counter = a.store().get("counter").unwrap().unwrap();
    assert_eq!(u64::from_le_bytes(counter.try_into().unwrap()), 80, "conflicts: {conflicts:?}");
    let cells = Array::open(b.store(), "/cells").unwrap().read_all::<i64>().unwrap();
    let want: Vec<i64> = (0..16).map(|c| ((c / 4) * 100 + 16 + c % 4) as i64).collect();
    assert_eq!(cells, want, "each cell's last region write");
}
