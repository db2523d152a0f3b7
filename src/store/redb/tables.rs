//! The two tables a write transaction changes, and how values are written into them: segments in
//! the main table, short tails in the tails table (`layout.rs`).

use redb::{ReadableTable, Table, TableDefinition};

use super::layout::{continuation_bounds, may_have_tail, plan, segment_key};
use super::NAME;
use crate::error::StoreError;
use crate::store::kv::{engine_error, WriteBatch};

/// The main table: every Zarr key with its value's segment 0, the continuation keys, and
/// zarrdb's reserved keys.
pub(super) const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("zarr");
/// The tails of the values that have one, under their Zarr keys (format 4).
pub(super) const TAILS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("zarr-tails");

/// Both tables, open in one write transaction.
pub(super) struct Tables<'txn> {
    pub(super) main: Table<'txn, &'static [u8], &'static [u8]>,
    tails: Table<'txn, &'static [u8], &'static [u8]>,
}

impl<'txn> Tables<'txn> {
    /// Open (and create, in a file that lacks them) both tables in `txn`.
    pub(super) fn open(txn: &'txn redb::WriteTransaction) -> Result<Tables<'txn>, StoreError> {
        Ok(Tables {
            main: txn.open_table(TABLE).map_err(engine_error(NAME, "open_table", ""))?,
            tails: txn.open_table(TAILS).map_err(engine_error(NAME, "open_table", ""))?,
        })
    }

    /// Apply `batch`: its erased prefixes, then its puts.
    pub(super) fn write_batch(&mut self, batch: &WriteBatch) -> Result<(), StoreError> {
        for prefix in &batch.erased_prefixes {
            let erase = |e| engine_error(NAME, "erase_prefix", prefix)(e);
            let starts = |k: &[u8]| k.starts_with(prefix.as_bytes());
            let doomed = keys_from(&self.main, prefix.as_bytes(), starts).map_err(erase)?;
            remove_all(&mut self.main, &doomed).map_err(erase)?;
            let tails = keys_from(&self.tails, prefix.as_bytes(), starts).map_err(erase)?;
            remove_all(&mut self.tails, &tails).map_err(erase)?;
        }
        for (key, value) in &batch.puts {
            self.put(key, value.as_deref()).map_err(engine_error(NAME, "commit", key))?;
        }
        Ok(())
    }

    /// Store `value` (or remove the key) with its segments and tail, dropping the segments a
    /// longer old value left and the tail an old value had.
    pub(super) fn put(&mut self, key: &str, value: Option<&[u8]>) -> Result<(), redb::StorageError> {
        let mut segments = 0u32;
        let mut tail = None;
        let old_first = match value {
            Some(v) => {
                let layout = plan(key, v.len());
                let (head, rest) = v.split_at(layout.head);
                let old = self.main.insert(key.as_bytes(), &head[..head.len().min(layout.segment)])?;
                let old_first = old.map(|g| g.value().len());
                for (i, piece) in head.chunks(layout.segment).enumerate().skip(1) {
                    self.main.insert(segment_key(key, i as u32).as_slice(), piece)?;
                }
                segments = head.len().div_ceil(layout.segment).max(1) as u32;
                tail = (!rest.is_empty()).then_some(rest);
                old_first
            }
            None => self.main.remove(key.as_bytes())?.map(|g| g.value().len()),
        };
        match tail {
            Some(rest) => {
                self.tails.insert(key.as_bytes(), rest)?;
            }
            None if old_first.is_some_and(|len| may_have_tail(key, len)) => {
                self.tails.remove(key.as_bytes())?;
            }
            None => {}
        }
        let (first, last) = continuation_bounds(key);
        let first = if segments > 1 { segment_key(key, segments) } else { first };
        let stale = keys_in(&self.main, &first, &last)?;
        remove_all(&mut self.main, &stale)
    }
}

fn keys_in(table: &Table<&[u8], &[u8]>, first: &[u8], last: &[u8]) -> Result<Vec<Vec<u8>>, redb::StorageError> {
    let mut keys = Vec::new();
    for entry in table.range(first..=last)? {
        keys.push(entry?.0.value().to_vec());
    }
    Ok(keys)
}

fn keys_from(
    table: &Table<&[u8], &[u8]>,
    from: &[u8],
    keep: impl Fn(&[u8]) -> bool,
) -> Result<Vec<Vec<u8>>, redb::StorageError> {
    let mut keys = Vec::new();
    for entry in table.range(from..)? {
        let (k, _) = entry?;
        if !keep(k.value()) {
            break;
        }
        keys.push(k.value().to_vec());
    }
    Ok(keys)
}

fn remove_all(table: &mut Table<&[u8], &[u8]>, keys: &[Vec<u8>]) -> Result<(), redb::StorageError> {
    for key in keys {
        table.remove(key.as_slice())?;
    }
    Ok(())
}
