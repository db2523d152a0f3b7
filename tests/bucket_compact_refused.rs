//! Compaction of a bucket database (deleting the objects no commit reaches) is not built yet:
//! `Database::compact` says so by name instead of reporting a compaction that did nothing.

use zarrdb::error::CompactError;
use zarrdb::{Database, Error};

#[test]
fn compaction_is_refused_by_name() {
    let db = Database::create("zarrdb+memory://compact-refused").unwrap();
    db.store().set("k", b"v").unwrap();
    match db.compact() {
        Err(Error::Compact(CompactError::Unsupported { backend: "bucket", why, .. })) => {
            assert!(why.contains("not built yet"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(db.store().get("k").unwrap().as_deref(), Some(&b"v"[..]));
}
