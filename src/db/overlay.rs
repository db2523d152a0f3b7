//! The pending writes of a transaction, and reads that see them over the transaction's snapshot.
//!
//! A write transaction buffers its changes in a `WriteSet` (`store/pending.rs`) and hands them to
//! the engine in one batch at commit. Reads look in the buffer first, then in the snapshot the
//! transaction began on, so a transaction sees its own writes and nothing committed after it
//! began; the database's reserved keys stay out of what users list.

use super::RESERVED_PREFIX;
use crate::error::StoreError;
use crate::store::kv::KvSnapshot;
use crate::store::pending;
use crate::store::{list_dir_seeking, DirListing};

pub(crate) use crate::store::pending::{Lookup, WriteSet};

/// The first key at or after `from` under `within` visible through `writes` (if any) over `snap`,
/// skipping the reserved prefix.
pub(crate) fn next_key(
    snap: &dyn KvSnapshot,
    writes: Option<&WriteSet>,
    from: &str,
    within: &str,
) -> Result<Option<String>, StoreError> {
    pending::next_key(snap, writes, from, within, Some(RESERVED_PREFIX))
}

/// Write `bytes` at `offset` into `value` (the current value of `key`), growing it as needed; an
/// offset past its end is refused, as every store refuses it.
pub(crate) fn patch(key: &str, value: &mut Vec<u8>, offset: u64, bytes: &[u8]) -> Result<(), StoreError> {
    let len = value.len() as u64;
    if offset > len {
        return Err(StoreError::RangeOutOfBounds { key: key.to_owned(), range: format!("{offset}.."), len });
    }
    let end = offset as usize + bytes.len();
    if value.len() < end {
        value.resize(end, 0);
    }
    value[offset as usize..end].copy_from_slice(bytes);
    Ok(())
}

pub(crate) fn get(snap: &dyn KvSnapshot, writes: Option<&WriteSet>, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
    match writes.map_or(Lookup::Unknown, |w| w.lookup(key)) {
        Lookup::Value(v) => Ok(Some(v.to_vec())),
        Lookup::Absent => Ok(None),
        Lookup::Unknown => snap.get(key),
    }
}

pub(crate) fn list_prefix(
    snap: &dyn KvSnapshot,
    writes: Option<&WriteSet>,
    prefix: &str,
) -> Result<Vec<String>, StoreError> {
    pending::keys(snap, writes, prefix, Some(RESERVED_PREFIX))
}

pub(crate) fn list_dir(
    snap: &dyn KvSnapshot,
    writes: Option<&WriteSet>,
    prefix: &str,
) -> Result<DirListing, StoreError> {
    list_dir_seeking(prefix, |from| next_key(snap, writes, from, prefix))
}
