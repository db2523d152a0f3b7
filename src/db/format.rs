//! The zarrdb format of a database: which on-disk layout of its backend it holds, recorded under
//! `__zarrdb/format` with the version of the zarrdb that wrote the record, and checked at every
//! open (docs/format.md, "Formats").
//!
//! Each backend numbers its layouts; every layout change bumps the number of its backend:
//!
//! | number | redb | LMDB | sled |
//! |---|---|---|---|
//! | 1 | values whole (`&str` keys) | values bare | values whole |
//! | 2 | values in segments | values with a CRC-32C and its flag | values over 64 KiB in pieces |
//! | 3 | commit-log position | commit-log position | commit count |
//! | 4 | commit log named by the database, with a header; short tails in a table of their own | the log as redb's | as 3 |
//! | 5 | the multi-writer mode's commits in the commit log its processes share | as 4 | as 4 |
//! | 6 | history: the Zarr keys refer to values written once (`store/history`) | as redb's | as redb's |
//!
//! Format 6 is for databases that keep history; a database without it stays at format 5, so
//! builds that read format 5 go on reading it, and refuse a database with history (whose values
//! they would misread).
//!
//! Builds before numbers meant anything wrote `{"zarrdb_format":1}` for all of them, and told the
//! layouts apart by flags and rules that this build still applies. Such a database (or one marked
//! with any older number) is read as it is; a writable open upgrades it in place by committing
//! the current record, one atomic commit, since the current layout of each backend reads every
//! older one — except LMDB values stored bare (no checksum flag), which stay format 1 and are read
//! and written bare. redb format 1 keeps its entries in a table of another key type, which the
//! engine moves into the current table as it opens (`store/redb/upgrade.rs`) before this check.
//! A newer number is refused, naming the version that wrote it.

use std::path::Path;

use super::{Backend, RESERVED_PREFIX};
use crate::error::{Error, HistoryError, OpenError};
use crate::store::history::HistoryEngine;
use crate::store::kv::{KvEngine, KvSnapshot, WriteBatch};
use crate::store::LMDB_CHECKSUM_FLAG_KEY;

/// The format this build writes for a database without history.
pub(crate) const FORMAT_VERSION: u32 = 5;

/// The format of a database that keeps history, the newest this build reads.
pub(crate) const HISTORY_FORMAT: u32 = 6;

/// What builds before the numbered formats wrote, whatever their layout.
const LEGACY_MARKER: &[u8] = br#"{"zarrdb_format":1}"#;

/// The redb file format (redb's own, in its header) this build's redb reads and writes.
const REDB_FILE_FORMAT: u8 = 3;

/// The key of the format record.
fn marker_key() -> String {
    format!("{RESERVED_PREFIX}format")
}

/// The format record this build writes.
pub(crate) fn current_marker() -> Vec<u8> {
    marker(FORMAT_VERSION)
}

fn marker(format: u32) -> Vec<u8> {
    format!(r#"{{"zarrdb_format":{format},"zarrdb_version":"{}"}}"#, env!("CARGO_PKG_VERSION")).into_bytes()
}

/// What a format record says.
#[derive(Debug, PartialEq, Eq)]
enum Marker {
    /// The format this build writes.
    Current,
    /// The format of a database that keeps history.
    History,
    /// An older format, read by this build's rules.
    Older,
    /// A newer format, and the version of the zarrdb that wrote it.
    Newer { found: u32, written_by: String },
}

/// Parse a stored record; `None` when it is no format record at all.
fn parse(stored: &[u8]) -> Option<Marker> {
    let value: serde_json::Value = serde_json::from_slice(stored).ok()?;
    let object = value.as_object()?;
    let found = u32::try_from(object.get("zarrdb_format")?.as_u64()?).ok()?;
    Some(match found {
        0 => return None,
        f if f < FORMAT_VERSION => Marker::Older,
        FORMAT_VERSION => Marker::Current,
        HISTORY_FORMAT => Marker::History,
        _ => {
            let written_by = match object.get("zarrdb_version").and_then(|v| v.as_str()) {
                // Escaped and capped, so a hostile record still makes a one-line message.
                Some(version) => version.chars().take(40).collect::<String>().escape_debug().to_string(),
                None => "(version not recorded)".to_owned(),
            };
            Marker::Newer { found, written_by }
        }
    })
}

/// Check the format record of the database in `engine`, upgrade an older one in place (unless
/// `read_only`), or write the record into a database that has none yet. With `start_history`, a
/// database without history that holds no data yet starts keeping it. Whether the database keeps
/// history.
pub(crate) fn check_format(
    engine: &dyn KvEngine,
    backend: Backend,
    path: &str,
    read_only: bool,
    start_history: bool,
) -> Result<bool, Error> {
    let key = marker_key();
    let snapshot = engine.snapshot()?;
    // LMDB values are sealed only where the flag is; a database without it keeps format 1.
    let bare_lmdb = backend == Backend::Lmdb && snapshot.get(LMDB_CHECKSUM_FLAG_KEY)?.is_none();
    let stored = snapshot.get(&key)?;
    let start = start_history && !read_only;
    let empty = start && holds_no_data(snapshot.as_ref())?;
    drop(snapshot);
    let found = stored.as_deref().map(|stored| (stored, parse(stored)));
    if matches!(found, Some((_, Some(Marker::Current | Marker::History)))) && bare_lmdb {
        return Err(OpenError::Corrupted {
            path: path.to_owned(),
            backend: backend.name(),
            source: format!(
                "format {} stores LMDB values with checksums, and the flag saying so is missing",
                if matches!(found, Some((_, Some(Marker::History)))) { HISTORY_FORMAT } else { FORMAT_VERSION }
            )
            .into(),
        }
        .into());
    }
    let write = match found {
        Some((_, Some(Marker::History))) => return Ok(true),
        Some((_, Some(Marker::Newer { found, written_by }))) => {
            return Err(
                OpenError::NewerFormat { path: path.to_owned(), found, supported: HISTORY_FORMAT, written_by }.into()
            )
        }
        Some((stored, None)) => {
            return Err(OpenError::FormatVersion {
                path: path.to_owned(),
                // Escaped, so a record holding line breaks still makes a one-line message.
                found: String::from_utf8_lossy(stored).chars().take(80).collect::<String>().escape_debug().to_string(),
                supported: HISTORY_FORMAT,
            }
            .into());
        }
        _ if start && bare_lmdb => {
            return Err(HistoryError::CannotStart {
                database: path.to_owned(),
                why: "its LMDB values have no checksums (format 1)",
            }
            .into())
        }
        _ if start && !empty => {
            return Err(HistoryError::CannotStart {
                database: path.to_owned(),
                why: "it holds data already, kept without history",
            }
            .into())
        }
        _ if start => {
            let mut batch = WriteBatch::default();
            batch.puts.insert(key, Some(marker(HISTORY_FORMAT)));
            batch.puts.extend(HistoryEngine::start().into_iter().map(|(k, v)| (k, Some(v))));
            engine.commit(batch, true)?;
            return Ok(true);
        }
        Some((_, Some(Marker::Current))) => return Ok(false),
        Some((_, Some(Marker::Older))) if read_only || bare_lmdb => return Ok(false),
        Some((_, Some(Marker::Older))) => current_marker(),
        // A read-only handle writes nothing; a database without the record holds no data yet.
        None if read_only => return Ok(false),
        None if bare_lmdb => LEGACY_MARKER.to_vec(),
        None => current_marker(),
    };
    let mut batch = WriteBatch::default();
    batch.puts.insert(key, Some(write));
    engine.commit(batch, true)?;
    Ok(false)
}

/// Whether the database holds no Zarr key (only zarrdb's bookkeeping, if anything).
fn holds_no_data(snapshot: &dyn KvSnapshot) -> Result<bool, Error> {
    let first = snapshot.next_key("", "")?;
    let after_bookkeeping = format!("{}0", RESERVED_PREFIX.trim_end_matches('/'));
    Ok(match first {
        None => true,
        Some(key) if key.starts_with(RESERVED_PREFIX) => snapshot.next_key(&after_bookkeeping, "")?.is_none(),
        Some(_) => false,
    })
}

/// Refuse a redb file whose redb file format is newer than this build's redb reads, before redb
/// sees it: redb reports one as damaged. The version byte of the header's primary commit slot is
/// what redb checks first; a file too short for a header is left to redb.
pub(crate) fn check_redb_file_format(path: &Path) -> Result<(), OpenError> {
    // redb's header: 9 bytes of magic, the god byte (bit 0: the primary slot), then two commit
    // slots of 128 bytes from offset 64, each starting with its version byte.
    const GOD_BYTE: usize = 9;
    const SLOTS: usize = 64;
    const SLOT_SIZE: usize = 128;
    let mut header = [0u8; SLOTS + 2 * SLOT_SIZE];
    let read = std::fs::File::open(path).and_then(|mut file| std::io::Read::read_exact(&mut file, &mut header));
    if read.is_err() {
        return Ok(());
    }
    let primary = usize::from(header[GOD_BYTE] & 1);
    let found = header[SLOTS + primary * SLOT_SIZE];
    if found > REDB_FILE_FORMAT {
        return Err(OpenError::NewerEngineFormat {
            path: path.display().to_string(),
            backend: Backend::Redb.name(),
            found: found.into(),
            supported: REDB_FILE_FORMAT.into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_parse_by_number() {
        assert_eq!(parse(LEGACY_MARKER), Some(Marker::Older));
        assert_eq!(parse(&current_marker()), Some(Marker::Current));
        assert_eq!(
            parse(br#"{"zarrdb_format":9,"zarrdb_version":"7.2.0"}"#),
            Some(Marker::Newer { found: 9, written_by: "7.2.0".into() })
        );
        assert_eq!(parse(br#"{"zarrdb_format":6}"#), Some(Marker::History));
        assert_eq!(
            parse(b"{\"zarrdb_format\":7,\"zarrdb_version\":\"a\\nb\"}"),
            Some(Marker::Newer { found: 7, written_by: "a\\nb".into() })
        );
        for unreadable in [&b"zarrdb"[..], b"{}", br#"{"zarrdb_format":0}"#, br#"{"zarrdb_format":"3"}"#, b"[3]"] {
            assert_eq!(parse(unreadable), None, "{}", String::from_utf8_lossy(unreadable));
        }
    }
}
