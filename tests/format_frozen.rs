//! The current format of every backend is frozen: a database built from fixed inputs (the content
//! of `tests/fixtures/format/make_fixture.rs`) must hold, key for key and byte for byte as its
//! engine stores them (read with redb, heed and sled themselves, `__zarrdb/` bookkeeping
//! included), what `tests/fixtures/format/frozen-<backend>.txt` lists. A change to how any backend
//! lays out its data therefore fails here until the format number is bumped and the dump made
//! again, which this test refuses to do for an unchanged number:
//!
//! ```text
//! ZARRDB_FREEZE_FORMAT=1 cargo test --test format_frozen
//! ```
//!
//! rewrites a dump only when the format number it records differs from the one this build
//! writes (or the file is missing: delete it when only the inputs of this test changed).
//! docs/format.md, "Formats", says what else a new number needs.
//!
//! Besides those inputs each database holds one 4,096-byte value, which redb keeps with a tail.
//!
//! Three values vary between runs and are masked: the random database id in `__zarrdb/commit-log`,
//! the log's id and path in `__zarrdb/commit-log-file`, and the zarrdb version in `__zarrdb/format`.

use std::path::{Path, PathBuf};

use zarrdb::{Backend, Database};

#[path = "common/frozen_dump.rs"]
mod frozen_dump;
#[path = "fixtures/format/make_fixture.rs"]
mod make_fixture;

fn frozen(backend: Backend) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/format/frozen-{}.txt", backend.name()))
}

#[test]
fn the_current_format_of_every_backend_is_frozen() {
    let dir = tempfile::tempdir().unwrap();
    let mut failed = Vec::new();
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let path = dir.path().join(backend.name());
        let db = Database::builder().backend(backend).create(&path).unwrap();
        make_fixture::write(&db, "frozen").unwrap();
        // A 4,096-byte chunk, which redb stores with a tail (format 4).
        let four_kib: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
        db.store().set("tail/c/0", &four_kib).unwrap();
        drop(db);
        let (_, now) = frozen_dump::dump(backend, &path, |_, _| None);
        let remedy = "a layout change needs a new format number (src/db/format.rs, docs/format.md \"Formats\"), then \
                      ZARRDB_FREEZE_FORMAT=1";
        if let Err(why) = frozen_dump::compare(&frozen(backend), &now, remedy) {
            failed.push(why);
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
