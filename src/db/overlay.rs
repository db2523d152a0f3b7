//! The pending writes of a transaction, and reads that see them over the transaction's snapshot.
//!
//! A write transaction buffers its changes here and hands them to the engine in one batch at
//! commit. Reads look in the buffer first, then in the snapshot the transaction began on, so a
//! transaction sees its own writes and nothing committed after it began.

use std::collections::BTreeMap;
use std::ops::Bound;

use super::RESERVED_PREFIX;
use crate::error::StoreError;
use crate::store::kv::{KvSnapshot, WriteBatch};
use crate::store::{list_dir_seeking, DirListing};

/// What the buffer knows about a key.
pub(crate) enum Lookup<'a> {
    /// Written in this transaction.
    Value(&'a [u8]),
    /// Erased in this transaction.
    Absent,
    /// Untouched: ask the snapshot.
    Unknown,
}

/// Buffered changes: erased prefixes (applied first at commit), then puts and deletes.
#[derive(Debug, Default)]
pub(crate) struct WriteSet {
    erased: Vec<String>,
    puts: BTreeMap<String, Option<Vec<u8>>>,
}

impl WriteSet {
    pub fn lookup(&self, key: &str) -> Lookup<'_> {
        match self.puts.get(key) {
            Some(Some(v)) => Lookup::Value(v),
            Some(None) => Lookup::Absent,
            None if self.erased_prefix_of(key).is_some() => Lookup::Absent,
            None => Lookup::Unknown,
        }
    }

    pub fn put(&mut self, key: &str, value: Vec<u8>) {
        self.puts.insert(key.to_owned(), Some(value));
    }

    pub fn delete(&mut self, key: &str) {
        self.puts.insert(key.to_owned(), None);
    }

    pub fn erase_prefix(&mut self, prefix: &str) {
        let doomed: Vec<String> =
            self.puts_from(prefix).take_while(|(k, _)| k.starts_with(prefix)).map(|(k, _)| k.clone()).collect();
        for key in doomed {
            self.puts.remove(&key);
        }
        if self.erased_prefix_of(prefix).is_none() {
            // A longer prefix erased earlier is covered by this one.
            self.erased.retain(|p| !p.starts_with(prefix));
            self.erased.push(prefix.to_owned());
        }
    }

    pub fn into_batch(self) -> WriteBatch {
        WriteBatch { erased_prefixes: self.erased, puts: self.puts }
    }

    fn erased_prefix_of(&self, key: &str) -> Option<&str> {
        self.erased.iter().find(|p| key.starts_with(p.as_str())).map(String::as_str)
    }

    fn puts_from<'a>(&'a self, from: &'a str) -> impl Iterator<Item = (&'a String, &'a Option<Vec<u8>>)> + 'a {
        self.puts.range::<str, _>((Bound::Included(from), Bound::Unbounded))
    }

    /// The first buffered key `>= from` under `within` that holds a value.
    fn next_put(&self, from: &str, within: &str) -> Option<String> {
        self.puts_from(from)
            .take_while(|(k, _)| k.starts_with(within))
            .find(|(_, v)| v.is_some())
            .map(|(k, _)| k.clone())
    }
}

/// The first key at or after `from` under `within` visible through `writes` (if any) over `snap`,
/// skipping the reserved prefix.
pub(crate) fn next_key(
    snap: &dyn KvSnapshot,
    writes: Option<&WriteSet>,
    from: &str,
    within: &str,
) -> Result<Option<String>, StoreError> {
    let start = from;
    let mut from = from.to_owned();
    let from_snapshot = loop {
        let Some(key) = snap.next_key(&from, within)? else { break None };
        if key.starts_with(RESERVED_PREFIX) {
            from = skip_subtree(RESERVED_PREFIX, &key);
            continue;
        }
        let Some(writes) = writes else { break Some(key) };
        if let Some(p) = writes.erased_prefix_of(&key) {
            from = skip_subtree(p, &key);
        } else if writes.puts.contains_key(&key) {
            // The buffer decides this key's fate; it is reported from the buffer's side.
            from = format!("{key}\0");
        } else {
            break Some(key);
        }
    };
    let from_buffer = writes.and_then(|w| w.next_put(start, within));
    Ok(match (from_snapshot, from_buffer) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    })
}

/// A key just past every key that starts with `prefix` (which `key` does).
fn skip_subtree(prefix: &str, key: &str) -> String {
    match prefix.strip_suffix('/') {
        // '0' is the byte after '/'.
        Some(stem) => format!("{stem}0"),
        None => format!("{key}\0"),
    }
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
    let mut keys: Vec<String> = snap
        .keys(prefix)?
        .into_iter()
        .filter(|k| !k.starts_with(RESERVED_PREFIX))
        .filter(|k| writes.is_none_or(|w| matches!(w.lookup(k), Lookup::Unknown)))
        .collect();
    if let Some(w) = writes {
        keys.extend(
            w.puts_from(prefix)
                .take_while(|(k, _)| k.starts_with(prefix))
                .filter(|(_, v)| v.is_some())
                .map(|(k, _)| k.clone()),
        );
        keys.sort();
    }
    Ok(keys)
}

pub(crate) fn list_dir(
    snap: &dyn KvSnapshot,
    writes: Option<&WriteSet>,
    prefix: &str,
) -> Result<DirListing, StoreError> {
    list_dir_seeking(prefix, |from| next_key(snap, writes, from, prefix))
}
