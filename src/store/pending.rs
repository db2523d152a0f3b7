//! Writes not yet in an engine's tree, and reads that see them over a snapshot of it.
//!
//! A write transaction buffers its changes in a [`WriteSet`] and hands them to the engine in one
//! batch at commit (`db`); a shared commit log's records that no engine commit holds yet are a
//! `WriteSet` too. [`Merged`] reads one over a snapshot: the set first, then the snapshot.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use super::kv::{slice_range, KvSnapshot, WriteBatch};
use super::{lend_within, ByteRange};
use crate::error::StoreError;

/// What a set of writes knows about a key.
pub(crate) enum Lookup<'a> {
    /// Written.
    Value(&'a [u8]),
    /// Erased.
    Absent,
    /// Untouched: ask the snapshot.
    Unknown,
}

/// Buffered changes: erased prefixes (applied first at commit), then puts and deletes.
#[derive(Clone, Debug, Default)]
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

    /// Apply `batch` after what the set holds, as the engine applies it: its erased prefixes,
    /// then its puts and deletes.
    pub fn apply(&mut self, batch: &WriteBatch) {
        for prefix in &batch.erased_prefixes {
            self.erase_prefix(prefix);
        }
        for (key, value) in &batch.puts {
            self.puts.insert(key.clone(), value.clone());
        }
    }

    pub fn into_batch(self) -> WriteBatch {
        WriteBatch { erased_prefixes: self.erased, puts: self.puts, note: Default::default() }
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

/// The first key at or after `from` under `within` visible through `writes` (if any) over
/// `snap`, skipping every key under `hidden` (the database's reserved keys, for its users).
pub(crate) fn next_key(
    snap: &dyn KvSnapshot,
    writes: Option<&WriteSet>,
    from: &str,
    within: &str,
    hidden: Option<&str>,
) -> Result<Option<String>, StoreError> {
    let start = from;
    let mut from = from.to_owned();
    let from_snapshot = loop {
        let Some(key) = snap.next_key(&from, within)? else { break None };
        if let Some(hidden) = hidden.filter(|h| key.starts_with(h)) {
            from = skip_subtree(hidden, &key);
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
    let from_buffer =
        writes.and_then(|w| w.next_put(start, within)).filter(|k| hidden.is_none_or(|h| !k.starts_with(h)));
    Ok(match (from_snapshot, from_buffer) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    })
}

/// Every key under `prefix` visible through `writes` (if any) over `snap`, in order, without the
/// keys under `hidden`.
pub(crate) fn keys(
    snap: &dyn KvSnapshot,
    writes: Option<&WriteSet>,
    prefix: &str,
    hidden: Option<&str>,
) -> Result<Vec<String>, StoreError> {
    let visible = |k: &String| hidden.is_none_or(|h| !k.starts_with(h));
    let mut keys: Vec<String> = snap
        .keys(prefix)?
        .into_iter()
        .filter(visible)
        .filter(|k| writes.is_none_or(|w| matches!(w.lookup(k), Lookup::Unknown)))
        .collect();
    if let Some(w) = writes {
        keys.extend(
            w.puts_from(prefix)
                .take_while(|(k, _)| k.starts_with(prefix))
                .filter(|(k, v)| v.is_some() && visible(k))
                .map(|(k, _)| k.clone()),
        );
        keys.sort();
    }
    Ok(keys)
}

/// A key just past every key that starts with `prefix` (which `key` does).
fn skip_subtree(prefix: &str, key: &str) -> String {
    match prefix.strip_suffix('/') {
        // '0' is the byte after '/'.
        Some(stem) => format!("{stem}0"),
        None => format!("{key}\0"),
    }
}

/// A snapshot with writes over it: every read sees `writes` first, then `base`.
pub(crate) struct Merged {
    pub base: Arc<dyn KvSnapshot>,
    pub writes: Arc<WriteSet>,
}

impl KvSnapshot for Merged {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        match self.writes.lookup(key) {
            Lookup::Value(v) => Ok(Some(v.to_vec())),
            Lookup::Absent => Ok(None),
            Lookup::Unknown => self.base.get(key),
        }
    }

    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        match self.writes.lookup(key) {
            Lookup::Value(v) => slice_range(key, v, range).map(Some),
            Lookup::Absent => Ok(None),
            Lookup::Unknown => self.base.get_range(key, range),
        }
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        match self.writes.lookup(key) {
            Lookup::Value(v) => Ok(Some(v.len() as u64)),
            Lookup::Absent => Ok(None),
            Lookup::Unknown => self.base.size(key),
        }
    }

    fn with_value(&self, key: &str, read: &mut dyn FnMut(&[u8])) -> Result<bool, StoreError> {
        match self.writes.lookup(key) {
            Lookup::Value(v) => {
                read(v);
                Ok(true)
            }
            Lookup::Absent => Ok(false),
            Lookup::Unknown => self.base.with_value(key, read),
        }
    }

    fn with_value_within(&self, key: &str, limit: u64, read: &mut dyn FnMut(&[u8])) -> Result<Option<u64>, StoreError> {
        match self.writes.lookup(key) {
            Lookup::Value(v) => Ok(Some(lend_within(v, limit, read))),
            Lookup::Absent => Ok(None),
            Lookup::Unknown => self.base.with_value_within(key, limit, read),
        }
    }

    fn next_key(&self, from: &str, within: &str) -> Result<Option<String>, StoreError> {
        next_key(self.base.as_ref(), Some(&self.writes), from, within, None)
    }

    fn keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        keys(self.base.as_ref(), Some(&self.writes), prefix, None)
    }
}

#[cfg(test)]
#[path = "pending_tests.rs"]
pub(crate) mod tests;
