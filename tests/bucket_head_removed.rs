//! A bucket database's `head` removed behind a writer's back (on a real S3 server, SeaweedFS on
//! 127.0.0.1) while a transaction is open: its commit, conditioned on the head it read, is
//! refused (SeaweedFS answers 412; AWS answers 404 to `If-Match` on a missing object, which
//! object_store reports as the same failed precondition). That is a lost race, not an error: the commit is tried
//! again over what is there now (no head: an empty database) and lands, and a fresh reader sees
//! it.

#[path = "common/seaweed.rs"]
#[allow(dead_code)]
mod seaweed;

use zarrdb::store::{ObjectStore, WritableStore};
use zarrdb::Database;

#[test]
fn a_commit_over_a_removed_head_is_tried_again() {
    let plain = seaweed::bucket("head-removed");
    let locator = format!("zarrdb+{plain}");
    let db = Database::create(&locator).unwrap();
    db.store().set("before", b"first commit").unwrap();

    let txn = db.begin_write().unwrap();
    txn.store().set("after", b"written over no head").unwrap();
    ObjectStore::open(&plain).unwrap().erase("__zarrdb/head").unwrap();
    txn.commit().unwrap();

    let reader = Database::builder().read_only(true).open(&locator).unwrap();
    assert_eq!(reader.store().get("after").unwrap().as_deref(), Some(&b"written over no head"[..]));
    // The commit went over an empty database: what the removed head named is not there.
    assert_eq!(reader.store().get("before").unwrap(), None);
}
