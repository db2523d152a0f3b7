//! Damage in the middle of sled's log: sled's recovery stops at the first message whose CRC
//! fails, as it does at the torn tail of a crash, and opens an earlier state without an error.
//! zarrdb keeps the count of commits that reached the disk beside sled's files
//! (`store/sled/anchor.rs`), so the open reports the database as damaged instead. Where sled's
//! recovery panics on the damage instead (now and then, depending on what the zeroed page held),
//! that is reported as damage too. (The sound database's reopens are `tests/sled_reopen.rs`: a
//! panic inside sled can leave its global thread pool unable to release another database's lock
//! in the same process.)

#[path = "common/sled_fixture.rs"]
mod sled_fixture;

use sled_fixture::{build, open, COMMITS};
use zarrdb::error::OpenError;
use zarrdb::Error;

#[test]
fn a_zeroed_page_in_the_middle_of_the_log_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.sled");
    build(&path);
    assert_eq!(open(&path).unwrap(), COMMITS);

    let log = path.join("db");
    let mut bytes = std::fs::read(&log).unwrap();
    let page = bytes.len() / 2 / 4096 * 4096;
    bytes[page..page + 4096].fill(0);
    std::fs::write(&log, &bytes).unwrap();

    match open(&path) {
        Err(Error::Open(OpenError::Corrupted { .. })) => {}
        other => panic!("a damaged log opened as {other:?} (of {COMMITS} keys)"),
    }
}
