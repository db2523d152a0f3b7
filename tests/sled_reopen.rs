//! A sound sled database reopens after every kind of close with all its commits: sled's
//! background threads release its file lock a moment after the last handle is dropped, and the
//! reopen waits that out (`store/sled/mod.rs`).

#[path = "common/sled_fixture.rs"]
mod sled_fixture;

use sled_fixture::{build, open, COMMITS};
use zarrdb::{Backend, Database};

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
