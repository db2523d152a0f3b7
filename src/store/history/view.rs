//! Reading a database that keeps history: the head (the Zarr keys hold entries that refer to the
//! values) and any older version (the entries of that version, folded from the changes recorded
//! by each commit along its ancestry).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::record::{damaged, object_key, Entry, PREFIX};
use crate::error::StoreError;
use crate::store::kv::KvSnapshot;
use crate::store::ByteRange;

/// A key past every key of history: '0' is the byte after '/'.
fn past_history() -> String {
    format!("{}0", PREFIX.trim_end_matches('/'))
}

/// The value of `entry`, which `key` refers to, or why it is missing.
fn missing(key: &str) -> StoreError {
    damaged(key, "the value a key of a database with history refers to is missing")
}

fn read_entry(snap: &dyn KvSnapshot, entry: &Entry, key: &str) -> Result<Vec<u8>, StoreError> {
    let value = snap.get(&object_key(entry))?.ok_or_else(|| missing(key))?;
    match value.len() as u64 == entry.len {
        true => Ok(value),
        false => Err(damaged(key, "a value of a database with history is not as long as its reference says")),
    }
}

/// The latest commit, through the entries at the Zarr keys. History's own keys are hidden.
pub(crate) struct Head {
    pub inner: Arc<dyn KvSnapshot>,
}

impl Head {
    /// The entry at `key`; `None` for an absent key and for history's own keys.
    fn entry(&self, key: &str) -> Result<Option<Entry>, StoreError> {
        if key.starts_with(PREFIX) {
            return Ok(None);
        }
        let Some(bytes) = self.inner.get(key)? else { return Ok(None) };
        Entry::decode(key, &bytes).map(Some)
    }

    /// Whether `key` is a Zarr key (referring to a value), not bookkeeping stored as it is.
    fn refers(key: &str) -> bool {
        !key.starts_with(crate::key::RESERVED_PREFIX)
    }
}

impl KvSnapshot for Head {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        if !Head::refers(key) {
            return match key.starts_with(PREFIX) {
                true => Ok(None),
                false => self.inner.get(key),
            };
        }
        let Some(entry) = self.entry(key)? else { return Ok(None) };
        read_entry(self.inner.as_ref(), &entry, key).map(Some)
    }

    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        if !Head::refers(key) {
            return match key.starts_with(PREFIX) {
                true => Ok(None),
                false => self.inner.get_range(key, range),
            };
        }
        let Some(entry) = self.entry(key)? else { return Ok(None) };
        if range.resolve(entry.len).is_none() {
            return Err(StoreError::RangeOutOfBounds { key: key.to_owned(), range: range.describe(), len: entry.len });
        }
        self.inner.get_range(&object_key(&entry), range)?.ok_or_else(|| missing(key)).map(Some)
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        if !Head::refers(key) {
            return match key.starts_with(PREFIX) {
                true => Ok(None),
                false => self.inner.size(key),
            };
        }
        Ok(self.entry(key)?.map(|e| e.len))
    }

    fn with_value(&self, key: &str, read: &mut dyn FnMut(&[u8])) -> Result<bool, StoreError> {
        if !Head::refers(key) {
            return match key.starts_with(PREFIX) {
                true => Ok(false),
                false => self.inner.with_value(key, read),
            };
        }
        let Some(entry) = self.entry(key)? else { return Ok(false) };
        match self.inner.with_value(&object_key(&entry), read)? {
            true => Ok(true),
            false => Err(missing(key)),
        }
    }

    fn next_key(&self, from: &str, within: &str) -> Result<Option<String>, StoreError> {
        let mut from = from.to_owned();
        loop {
            match self.inner.next_key(&from, within)? {
                Some(key) if key.starts_with(PREFIX) => from = past_history(),
                found => return Ok(found),
            }
        }
    }

    fn keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        if !PREFIX.starts_with(prefix) {
            return self.inner.keys(prefix);
        }
        // The prefix covers history's keys, which outnumber the live ones: step over them.
        let mut keys = Vec::new();
        let mut from = prefix.to_owned();
        while let Some(key) = self.next_key(&from, prefix)? {
            from = format!("{key}\0");
            keys.push(key);
        }
        Ok(keys)
    }
}

/// One older version: its Zarr keys and their entries, over a snapshot that holds the values
/// (which are never rewritten, so any later snapshot holds them too).
pub(crate) struct Version {
    pub inner: Arc<dyn KvSnapshot>,
    pub entries: BTreeMap<String, Entry>,
}

impl KvSnapshot for Version {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(entry) = self.entries.get(key) else { return Ok(None) };
        read_entry(self.inner.as_ref(), entry, key).map(Some)
    }

    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(entry) = self.entries.get(key) else { return Ok(None) };
        if range.resolve(entry.len).is_none() {
            return Err(StoreError::RangeOutOfBounds { key: key.to_owned(), range: range.describe(), len: entry.len });
        }
        self.inner.get_range(&object_key(entry), range)?.ok_or_else(|| missing(key)).map(Some)
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        Ok(self.entries.get(key).map(|e| e.len))
    }

    fn with_value(&self, key: &str, read: &mut dyn FnMut(&[u8])) -> Result<bool, StoreError> {
        let Some(entry) = self.entries.get(key) else { return Ok(false) };
        match self.inner.with_value(&object_key(entry), read)? {
            true => Ok(true),
            false => Err(missing(key)),
        }
    }

    fn next_key(&self, from: &str, within: &str) -> Result<Option<String>, StoreError> {
        let start = from.max(within);
        let next = self.entries.range::<str, _>((std::ops::Bound::Included(start), std::ops::Bound::Unbounded)).next();
        Ok(next.map(|(k, _)| k).filter(|k| k.starts_with(within)).cloned())
    }

    fn keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let from = (std::ops::Bound::Included(prefix), std::ops::Bound::Unbounded);
        Ok(self.entries.range::<str, _>(from).map(|(k, _)| k).take_while(|k| k.starts_with(prefix)).cloned().collect())
    }
}
