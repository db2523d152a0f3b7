//! Files of zarrdb's redb format 1 (docs/format.md, "Formats") file their entries in a table of
//! `&str` keys; every later format uses `&[u8]` keys (continuation keys end in a NUL byte and a
//! segment number). redb records a table's key type and refuses to open it as another, so such a
//! file is upgraded as it opens: one write transaction moves the entries into a table of the
//! current type, each value whole (a whole value reads as a value of one segment). A crash leaves
//! the file as it was or upgraded. In a read-only open the transaction runs in the in-memory
//! overlay and nothing reaches the file. The entries pass through memory once: format 1 was
//! written for a few minutes on 2026-11-21, by builds without a command line that wrote data.

use redb::{ReadableDatabase, ReadableTable, TableDefinition, TableError};

use super::{NAME, TABLE};
use crate::error::StoreError;
use crate::store::kv::engine_error;

/// The table of format 1.
const FORMAT_1_TABLE: TableDefinition<&str, &[u8]> = TableDefinition::new("zarr");

/// Whether the file holds a format-1 table, in a read transaction (which writes nothing).
pub(super) fn is_format_1(db: &impl ReadableDatabase) -> Result<bool, StoreError> {
    let read = db.begin_read().map_err(engine_error(NAME, "upgrade format 1", ""))?;
    Ok(matches!(read.open_table(TABLE), Err(TableError::TableTypeMismatch { .. })))
}

/// Move the entries of a format-1 table into the current one; `true` if there was one.
pub(super) fn format_1(db: &redb::Database) -> Result<bool, StoreError> {
    // Probed in a read transaction, so that opening a current file writes nothing.
    if !is_format_1(db)? {
        return Ok(false);
    }
    let txn = db.begin_write().map_err(engine_error(NAME, "upgrade format 1", ""))?;
    let entries = {
        let old = txn.open_table(FORMAT_1_TABLE).map_err(engine_error(NAME, "upgrade format 1: open", ""))?;
        let mut entries = Vec::new();
        for entry in old.iter().map_err(engine_error(NAME, "upgrade format 1: read", ""))? {
            let (key, value) = entry.map_err(engine_error(NAME, "upgrade format 1: read", ""))?;
            entries.push((key.value().to_owned(), value.value().to_vec()));
        }
        entries
    };
    txn.delete_table(FORMAT_1_TABLE).map_err(engine_error(NAME, "upgrade format 1: delete", ""))?;
    {
        let mut table = txn.open_table(TABLE).map_err(engine_error(NAME, "upgrade format 1: create", ""))?;
        for (key, value) in &entries {
            table.insert(key.as_bytes(), value.as_slice()).map_err(engine_error(
                NAME,
                "upgrade format 1: write",
                "",
            ))?;
        }
    }
    txn.commit().map_err(engine_error(NAME, "upgrade format 1: commit", ""))?;
    Ok(true)
}
