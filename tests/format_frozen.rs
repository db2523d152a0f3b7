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

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use zarrdb::{Backend, Database};

#[path = "fixtures/format/make_fixture.rs"]
mod make_fixture;

const MARKER: &[u8] = b"__zarrdb/format";
const COMMIT_LOG: &[u8] = b"__zarrdb/commit-log";
const COMMIT_LOG_FILE: &[u8] = b"__zarrdb/commit-log-file";
/// Values up to this length are listed whole; longer ones by length and CRC-32C.
const WHOLE: usize = 160;

fn escaped(bytes: &[u8]) -> String {
    bytes.iter().flat_map(|&b| std::ascii::escape_default(b)).map(char::from).collect()
}

/// Every entry of the closed database at `path`, through the engine's own crate.
fn entries(backend: Backend, path: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    match backend {
        Backend::Redb => {
            // The main table, then the tails table (its keys shown after `[tails] `).
            let db = redb::Database::open(path).unwrap();
            let txn = redb::ReadableDatabase::begin_read(&db).unwrap();
            let mut all = Vec::new();
            for (name, shown) in [("zarr", &b""[..]), ("zarr-tails", &b"[tails] "[..])] {
                let table: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new(name);
                let table = txn.open_table(table).unwrap();
                for entry in redb::ReadableTable::iter(&table).unwrap() {
                    let (k, v) = entry.unwrap();
                    all.push(([shown, k.value()].concat(), v.value().to_vec()));
                }
            }
            all
        }
        Backend::Lmdb => {
            // SAFETY: the database is closed; nothing else maps the file.
            let env = unsafe { heed::EnvOpenOptions::new().map_size(1 << 30).open(path) }.unwrap();
            let txn = env.read_txn().unwrap();
            let db: heed::Database<heed::types::Bytes, heed::types::Bytes> =
                env.open_database(&txn, None).unwrap().unwrap();
            let all = db.iter(&txn).unwrap().map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap()).collect();
            drop(txn);
            env.prepare_for_closing().wait();
            all
        }
        Backend::Sled => {
            let db = sled::open(path).unwrap();
            assert_eq!(db.tree_names().len(), 1, "zarrdb uses sled's default tree alone");
            db.iter().map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap()).collect()
        }
        other => unreachable!("{other:?}"),
    }
}

/// The dump of the database at `path` and the format number its record holds.
fn dump(backend: Backend, path: &Path) -> (u64, String) {
    let version = env!("CARGO_PKG_VERSION").as_bytes();
    let mut format = None;
    let mut lines = String::new();
    for (key, mut value) in entries(backend, path) {
        // LMDB seals each value with the CRC-32C of its key and bytes: checked here and shown as
        // such, since the masked values below change it.
        let mut trailer = "";
        if backend == Backend::Lmdb && key != b"__zarrdb/lmdb-value-checksum" {
            let (bytes, sum) = value.split_at(value.len() - 4);
            let expected = crc32c::crc32c_append(crc32c::crc32c(&key), bytes).to_le_bytes();
            assert_eq!(sum, expected, "LMDB checksum of {}", escaped(&key));
            trailer = " + crc32c(key, value)";
            value.truncate(value.len() - 4);
        }
        let shown = if key == MARKER {
            let record: serde_json::Value = serde_json::from_slice(&value).unwrap();
            format = record["zarrdb_format"].as_u64();
            let at = value.windows(version.len()).position(|w| w == version).expect("the version in the record");
            format!("{}<zarrdb version>{}", escaped(&value[..at]), escaped(&value[at + version.len()..]))
        } else if key == COMMIT_LOG {
            assert_eq!(value.len(), 16, "database id and sequence number");
            format!("<database id> seq {}", u64::from_le_bytes(value[8..].try_into().unwrap()))
        } else if key == COMMIT_LOG_FILE {
            // The log's id is random and its path the test's temporary folder: the layout is what
            // is frozen, an id of 8 bytes and then the path.
            let path = std::str::from_utf8(&value[8..]).expect("a UTF-8 path");
            assert!(path.ends_with("-log") || path.contains("-log.") || path.ends_with("zarrdb-log"), "{path}");
            "<log id> <absolute path of the log>".to_owned()
        } else if value.len() <= WHOLE {
            escaped(&value)
        } else {
            format!("crc32c {:08x}", crc32c::crc32c(&value))
        };
        // The log's path, and so the record's length, follows the temporary folder.
        let size = if key == COMMIT_LOG_FILE { "8 + path".to_owned() } else { value.len().to_string() };
        writeln!(lines, "{}\t{size} bytes\t{shown}{trailer}", escaped(&key)).unwrap();
    }
    let format = format.expect("a format record");
    (format, format!("zarrdb format {format} ({})\n{lines}", backend.name()))
}

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
        let (format, now) = dump(backend, &path);
        let file = frozen(backend);
        let then = std::fs::read_to_string(&file).unwrap_or_default();
        if now == then {
            continue;
        }
        let then_format = then.lines().next().and_then(|l| l.split(' ').nth(2)).and_then(|n| n.parse::<u64>().ok());
        if std::env::var_os("ZARRDB_FREEZE_FORMAT").is_some() && then_format != Some(format) {
            std::fs::write(&file, &now).unwrap();
            eprintln!("wrote {}", file.display());
            continue;
        }
        let first = if then.is_empty() {
            Some(("(the dump)", "(missing)"))
        } else {
            now.lines().zip(then.lines()).find(|(a, b)| a != b)
        };
        failed.push(format!(
            "{}: the {} layout changed under format {format} (first difference: {first:?}); a layout change needs a \
             new format number (src/db/format.rs, docs/format.md \"Formats\"), then ZARRDB_FREEZE_FORMAT=1",
            file.display(),
            backend.name()
        ));
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
