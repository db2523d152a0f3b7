//! A dump of a closed database, key for key and byte for byte as its engine stores it (read with
//! redb, heed and sled themselves, `__zarrdb/` bookkeeping included), for the frozen-format tests
//! (`tests/format_frozen.rs`, `tests/format_history_frozen.rs`). Values that vary between runs are
//! masked: the random database id in `__zarrdb/commit-log`, the log's id and path in
//! `__zarrdb/commit-log-file`, the zarrdb version in `__zarrdb/format`, and whatever the caller's
//! `mask` shows in its own way.

use std::fmt::Write as _;
use std::path::Path;

use zarrdb::Backend;

const MARKER: &[u8] = b"__zarrdb/format";
const COMMIT_LOG: &[u8] = b"__zarrdb/commit-log";
const COMMIT_LOG_FILE: &[u8] = b"__zarrdb/commit-log-file";
/// Values up to this length are listed whole; longer ones by length and CRC-32C.
const WHOLE: usize = 160;

pub fn escaped(bytes: &[u8]) -> String {
    bytes.iter().flat_map(|&b| std::ascii::escape_default(b)).map(char::from).collect()
}

/// A value as the dump lists it: whole up to [`WHOLE`] bytes, else by its CRC-32C.
pub fn shown(value: &[u8]) -> String {
    match value.len() <= WHOLE {
        true => escaped(value),
        false => format!("crc32c {:08x}", crc32c::crc32c(value)),
    }
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

/// The dump of the database at `path` and the format number its record holds. `mask` shows a
/// value of its choosing (given the key and the value without LMDB's checksum) as it returns.
pub fn dump(backend: Backend, path: &Path, mask: impl Fn(&[u8], &[u8]) -> Option<String>) -> (u64, String) {
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
        let shown = if let Some(shown) = mask(&key, &value) {
            shown
        } else if key == MARKER {
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
        } else {
            shown(&value)
        };
        // The log's path, and so the record's length, follows the temporary folder.
        let size = if key == COMMIT_LOG_FILE { "8 + path".to_owned() } else { value.len().to_string() };
        writeln!(lines, "{}\t{size} bytes\t{shown}{trailer}", escaped(&key)).unwrap();
    }
    let format = format.expect("a format record");
    (format, format!("zarrdb format {format} ({})\n{lines}", backend.name()))
}

/// Compare the dump `now` with the one in `file`: `Err` names the first difference and ends with
/// `remedy`. With `ZARRDB_FREEZE_FORMAT` set, `now` is written to `file` instead when the numbers
/// of its first line (before ` (`) differ from the file's, or the file is missing; never for
/// unchanged numbers.
pub fn compare(file: &Path, now: &str, remedy: &str) -> Result<(), String> {
    let then = std::fs::read_to_string(file).unwrap_or_default();
    if now == then {
        return Ok(());
    }
    let numbers = |dump: &str| dump.lines().next().and_then(|l| l.split(" (").next()).map(str::to_owned);
    if std::env::var_os("ZARRDB_FREEZE_FORMAT").is_some() && numbers(&then) != numbers(now) {
        std::fs::write(file, now).unwrap();
        eprintln!("wrote {}", file.display());
        return Ok(());
    }
    let first = match then.is_empty() {
        true => Some(("(the dump)", "(missing)")),
        false => now.lines().zip(then.lines()).find(|(a, b)| a != b),
    };
    Err(format!("{}: changed under the same numbers (first difference: {first:?}); {remedy}", file.display()))
}
