//! The current history layout is frozen, as `tests/format_frozen.rs` freezes the format of each
//! backend: a database with history built from fixed inputs (`make_history_fixture.rs`'s
//! `build`, layout 4: tags, a deleted tag, branches, a deleted branch's commits collected, a merge
//! commit, an expiry and a collection that left a base table and a folded record, values at their
//! entry and under their object keys, a commit whose changes sit beside its record, large new
//! values at their entry, `main`'s ref behind its head) must hold,
//! key for key and byte for byte, what `tests/fixtures/format/frozen-history-<backend>.txt`
//! lists. A change to how history lays out its records fails here until history's layout number
//! (`__zarrdb/h/meta`) or the format number is bumped and the dump made again, which this test
//! refuses to do for unchanged numbers:
//!
//! ```text
//! ZARRDB_FREEZE_FORMAT=1 cargo test --test format_history_frozen
//! ```
//!
//! Commit records hold the time they were made: their two times and their CRC-32C (which covers
//! the times) are checked, then shown as zeros.

use std::path::{Path, PathBuf};

use zarrdb::{Backend, Database};

#[path = "common/frozen_dump.rs"]
mod frozen_dump;
#[path = "fixtures/format/make_history_fixture.rs"]
#[allow(dead_code, reason = "the test uses `build` alone")]
mod make_history_fixture;

const RECORDS: &[u8] = b"__zarrdb/h/c/";
const META: &[u8] = b"__zarrdb/h/meta";

/// A commit record with its times and CRC-32C checked and zeroed, as the dump shows it.
fn masked_record(key: &[u8], value: &[u8]) -> String {
    let name = frozen_dump::escaped(key);
    assert!(value.len() > 4, "{name}: a record");
    let (body, sum) = value.split_at(value.len() - 4);
    assert_eq!(sum, crc32c::crc32c(body).to_le_bytes(), "{name}: the record's CRC-32C");
    // `ZHC1`: number, parent, time, oldest time; `ZHC2` and `ZHC3`: the merged commit after the
    // parent (docs/format.md, "History").
    let time_at = match &value[..4] {
        b"ZHC1" => 20,
        b"ZHC2" | b"ZHC3" => 28,
        other => panic!("{name}: a record of kind {}", frozen_dump::escaped(other)),
    };
    let field = |at: usize| u64::from_le_bytes(value[at..at + 8].try_into().unwrap());
    let (time, oldest) = (field(time_at), field(time_at + 8));
    assert!(oldest > 0 && oldest <= time, "{name}: its oldest time {oldest} is after its time {time}");
    let mut shown = value.to_vec();
    shown[time_at..time_at + 16].fill(0);
    let end = shown.len();
    shown[end - 4..].fill(0);
    format!("{} (times and CRC-32C zeroed)", frozen_dump::shown(&shown))
}

/// History's layout number, from `__zarrdb/h/meta`'s value (`ZHM1`, u32, CRC-32C).
fn layout(value: &[u8]) -> u32 {
    assert!(value.starts_with(b"ZHM1") && value.len() == 12, "history's meta record");
    u32::from_le_bytes(value[4..8].try_into().unwrap())
}

fn frozen(backend: Backend) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/format/frozen-history-{}.txt", backend.name()))
}

/// `zarrdb format F history layout L (backend)` and the dump's lines.
fn dump(backend: Backend, path: &Path) -> String {
    let found = std::cell::Cell::new(None);
    let (format, lines) = frozen_dump::dump(backend, path, |key, value| {
        if key == META {
            found.set(Some(layout(value)));
        }
        key.starts_with(RECORDS).then(|| masked_record(key, value))
    });
    let layout = found.get().expect("history's meta record");
    let (_, lines) = lines.split_once('\n').expect("the dump's first line");
    format!("zarrdb format {format} history layout {layout} ({})\n{lines}", backend.name())
}

#[test]
fn the_current_history_layout_is_frozen() {
    let dir = tempfile::tempdir().unwrap();
    let mut failed = Vec::new();
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let path = dir.path().join(backend.name());
        let db = Database::builder().backend(backend).history(true).create(&path).unwrap();
        make_history_fixture::build(&db, 4).unwrap();
        drop(db);
        let now = dump(backend, &path);
        let remedy = "a change to history's records needs a new history layout (src/store/history/record.rs) or \
                      format number, then ZARRDB_FREEZE_FORMAT=1";
        if let Err(why) = frozen_dump::compare(&frozen(backend), &now, remedy) {
            failed.push(why);
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
