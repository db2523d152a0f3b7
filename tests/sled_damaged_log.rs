//! Damage in the middle of sled's log: sled's recovery stops at the first message whose CRC
//! fails, as it does at the torn tail of a crash, and opens an earlier state without an error.
//! zarrdb keeps the count of commits that reached the disk beside sled's files
//! (`store/sled/anchor.rs`), so the open reports the database as damaged instead.

use std::path::Path;

use zarrdb::error::OpenError;
use zarrdb::{Backend, Database, Error};

const COMMITS: usize = 200;

fn build(path: &Path) {
    let db = Database::builder().backend(Backend::Sled).create(path).unwrap();
    let store = db.store();
    for i in 0..COMMITS {
        store.set(&format!("a/c/{i}"), &vec![i as u8; 2_000]).unwrap();
    }
}

fn open(path: &Path) -> Result<usize, Error> {
    let db = Database::builder().backend(Backend::Sled).read_only(true).open(path)?;
    Ok(db.store().list_prefix("a/")?.len())
}

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

#[test]
fn a_sound_database_reopens_after_every_kind_of_close() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.sled");
    build(&path);
    for _ in 0..3 {
        let db = Database::builder().backend(Backend::Sled).open(&path).unwrap();
        db.store().set("b/x", b"more").unwrap();
    }
    assert_eq!(open(&path).unwrap(), COMMITS);
}
