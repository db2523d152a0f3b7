//! `Database::compact` on a bucket database runs a collection with the default grace (an hour by
//! the server's clock): it succeeds, keeps every value, and deletes nothing just written
//! (`src/store/bucket/collect_tests.rs` tests what it deletes with no grace).

use zarrdb::Database;

#[test]
fn compaction_keeps_every_value() {
    let db = Database::create("zarrdb+memory://compact").unwrap();
    db.store().set("k", &vec![7u8; 50_000]).unwrap();
    db.store().set("k", &vec![8u8; 50_000]).unwrap();
    db.compact().unwrap();
    assert_eq!(db.store().get("k").unwrap(), Some(vec![8u8; 50_000]));
}
