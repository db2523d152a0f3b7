//! Reading a database that keeps history: the head (the Zarr keys hold entries that refer to the
//! values) and any older version (the entries of that version, folded from the changes recorded
//! by each commit along its ancestry).

use std::sync::Arc;

use super::record::{commit_key, damaged, object_key, Entry, ENTRY_LEN, PREFIX};
use crate::error::StoreError;
use crate::store::kv::KvSnapshot;
use crate::store::ByteRange;

/// A key past every key of history: '0' is the byte after '/'.
fn past_history() -> String {
    format!("{}0", PREFIX.trim_end_matches('/'))
}

/// The failure of a value a key's entry names that is nowhere.
fn missing(key: &str) -> StoreError {
    damaged(key, "the value a key of a database with history names is missing")
}

/// The failure of a stored value whose length is not its entry's.
fn wrong_length(key: &str) -> StoreError {
    damaged(key, "a value of a database with history is not as long as its entry says")
}

/// Where the value a version reads at a key is.
enum Found {
    /// Nowhere: the key is absent.
    Absent,
    /// In the entry at the key (the head's, or a version's whose value is still the head's).
    Inline(Vec<u8>),
    /// Under its object key.
    Object(Entry),
}

/// The latest commit, through the entries at the Zarr keys. History's own keys are hidden.
pub(crate) struct Head {
    pub inner: Arc<dyn KvSnapshot>,
}

impl Head {
    /// Where the value at `key` is, copying it only when it is inline and `copy` says so.
    fn find(&self, key: &str, copy: bool) -> Result<(Found, u64), StoreError> {
        let mut found = Ok((Found::Absent, 0));
        self.inner.with_value(key, &mut |bytes| {
            found = Entry::decode_head(key, bytes).map(|(entry, value)| match entry.inline {
                true => (Found::Inline(if copy { value.to_vec() } else { Vec::new() }), entry.len),
                false => (Found::Object(entry), entry.len),
            });
        })?;
        found
    }

    /// Whether `key` is bookkeeping stored as it is (history's own keys are hidden): `Some` of
    /// what the engine answers for it then.
    fn bookkeeping(key: &str) -> Option<bool> {
        key.starts_with(crate::key::RESERVED_PREFIX).then(|| !key.starts_with(PREFIX))
    }
}

/// Read the value of `entry` at its object key, checking its length.
fn read_object(snap: &dyn KvSnapshot, entry: &Entry, key: &str) -> Result<Vec<u8>, StoreError> {
    let value = snap.get(&object_key(entry))?.ok_or_else(|| missing(key))?;
    match value.len() as u64 == entry.len {
        true => Ok(value),
        false => Err(wrong_length(key)),
    }
}

fn out_of_range(key: &str, range: ByteRange, len: u64) -> StoreError {
    StoreError::RangeOutOfBounds { key: key.to_owned(), range: range.describe(), len }
}

impl KvSnapshot for Head {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        match Head::bookkeeping(key) {
            Some(true) => return self.inner.get(key),
            Some(false) => return Ok(None),
            None => {}
        }
        match self.find(key, true)?.0 {
            Found::Absent => Ok(None),
            Found::Inline(value) => Ok(Some(value)),
            Found::Object(entry) => read_object(self.inner.as_ref(), &entry, key).map(Some),
        }
    }

    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        match Head::bookkeeping(key) {
            Some(true) => return self.inner.get_range(key, range),
            Some(false) => return Ok(None),
            None => {}
        }
        let (found, len) = self.find(key, true)?;
        if !matches!(found, Found::Absent) && range.resolve(len).is_none() {
            return Err(out_of_range(key, range, len));
        }
        match found {
            Found::Absent => Ok(None),
            Found::Inline(value) => Ok(range.resolve(len).map(|r| value[r].to_vec())),
            Found::Object(entry) => {
                self.inner.get_range(&object_key(&entry), range)?.ok_or_else(|| missing(key)).map(Some)
            }
        }
    }

    /// The length without the value: an inline value's is its entry's length less the entry's
    /// head, found without reading past that head.
    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        self.with_value_within(key, 0, &mut |_| {})
    }

    fn with_value(&self, key: &str, read: &mut dyn FnMut(&[u8])) -> Result<bool, StoreError> {
        Ok(self.with_value_within(key, u64::MAX, read)?.is_some())
    }

    fn with_value_within(&self, key: &str, limit: u64, read: &mut dyn FnMut(&[u8])) -> Result<Option<u64>, StoreError> {
        match Head::bookkeeping(key) {
            Some(true) => return self.inner.with_value_within(key, limit, read),
            Some(false) => return Ok(None),
            None => {}
        }
        // An inline value is lent where the engine holds it, after its entry's head; a larger
        // one is read from its own key. Only an inline entry is longer than a head alone.
        let head = ENTRY_LEN as u64;
        let mut elsewhere = Ok(None);
        let Some(stored) = self.inner.with_value_within(key, limit.saturating_add(head), &mut |bytes| {
            elsewhere = Entry::decode_head(key, bytes).map(|(entry, value)| match entry.inline {
                true => {
                    read(value);
                    None
                }
                false => Some(entry),
            });
        })?
        else {
            return Ok(None);
        };
        if stored > limit.saturating_add(head) {
            return Ok(Some(stored - head));
        }
        match elsewhere? {
            None => Ok(Some(stored - head)),
            Some(entry) if entry.len > limit => Ok(Some(entry.len)),
            Some(entry) => match self.inner.with_value_within(&object_key(&entry), limit, read)? {
                Some(len) if len == entry.len => Ok(Some(len)),
                Some(_) => Err(wrong_length(key)),
                None => Err(missing(key)),
            },
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
/// (which are never rewritten, so any later snapshot holds them too, until the version expires
/// and a collection frees what only it read).
pub(crate) struct Version {
    pub inner: Arc<dyn KvSnapshot>,
    pub entries: Arc<super::Entries>,
    /// The commit that made it.
    pub seq: u64,
}

impl Version {
    /// The failure of a value of this version that is nowhere: the version expired and was
    /// collected since it was opened (an engine whose snapshots follow the live file: sled), or
    /// the file is damaged.
    fn missing(&self, key: &str) -> StoreError {
        match self.inner.size(&commit_key(self.seq)) {
            Ok(None) => StoreError::VersionExpired { key: key.to_owned() },
            _ => missing(key),
        }
    }

    /// The value `entry` names at `key` ([`read_entry`]); one that is nowhere because the
    /// version was collected since it was opened says so.
    pub(crate) fn read_entry(&self, key: &str, entry: &Entry) -> Result<Vec<u8>, StoreError> {
        match read_entry(self.inner.as_ref(), key, entry) {
            Err(StoreError::Damaged { .. }) if self.inner.size(&object_key(entry))?.is_none() => Err(self.missing(key)),
            read => read,
        }
    }
}

/// The value `entry` names at `key`, read through `snap`: an inline value is in the head's entry
/// while no later commit superseded it, and under its object key once one did (copied in that
/// commit).
pub(crate) fn read_entry(snap: &dyn KvSnapshot, key: &str, entry: &Entry) -> Result<Vec<u8>, StoreError> {
    if entry.inline {
        let mut found = Ok(None);
        snap.with_value(key, &mut |bytes| {
            // The same value has the same length: an entry that disagrees is damaged.
            found = Entry::decode_head(key, bytes).and_then(|(head, value)| match head.same_value(entry) {
                true if head.len == entry.len => Ok(Some(value.to_vec())),
                true => Err(wrong_length(key)),
                false => Ok(None),
            });
        })?;
        if let Some(value) = found? {
            return Ok(value);
        }
    }
    read_object(snap, entry, key)
}

impl KvSnapshot for Version {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(entry) = self.entries.get(key) else { return Ok(None) };
        self.read_entry(key, entry).map(Some)
    }

    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(entry) = self.entries.get(key) else { return Ok(None) };
        let Some(r) = range.resolve(entry.len) else { return Err(out_of_range(key, range, entry.len)) };
        if entry.inline {
            return Ok(Some(self.read_entry(key, entry)?[r].to_vec()));
        }
        self.inner.get_range(&object_key(entry), range)?.ok_or_else(|| self.missing(key)).map(Some)
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        Ok(self.entries.get(key).map(|e| e.len))
    }

    fn with_value(&self, key: &str, read: &mut dyn FnMut(&[u8])) -> Result<bool, StoreError> {
        Ok(self.with_value_within(key, u64::MAX, read)?.is_some())
    }

    /// The entry gives the length: a value over `limit` is not looked up at all.
    fn with_value_within(&self, key: &str, limit: u64, read: &mut dyn FnMut(&[u8])) -> Result<Option<u64>, StoreError> {
        let Some(entry) = self.entries.get(key) else { return Ok(None) };
        if entry.len > limit {
            return Ok(Some(entry.len));
        }
        if entry.inline {
            read(&self.read_entry(key, entry)?);
            return Ok(Some(entry.len));
        }
        match self.inner.with_value_within(&object_key(entry), limit, read)? {
            Some(len) if len == entry.len => Ok(Some(len)),
            Some(_) => Err(wrong_length(key)),
            None => Err(self.missing(key)),
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

/// A version on `main`'s first-parent line, read through a snapshot that does not change
/// (redb, LMDB): as the head of that snapshot reads, except at the keys changed since, which
/// read this version's entries. Opening it folds the changes since the version, not the whole
/// history, and a key changed by none costs what a head read costs. History's keys and the
/// engine's own bookkeeping are absent, as in [`Version`].
pub(crate) struct Behind {
    pub head: Head,
    /// The entries of the changed keys this version holds.
    pub version: Version,
    /// Every key changed since the version: its entry in the version, `None` where it was absent.
    pub changed: Arc<std::collections::BTreeMap<String, Option<Entry>>>,
}

impl Behind {
    /// Whether `key` reads the version's entry (or is absent from it): the changed keys, and
    /// every key under the reserved prefix, which no version holds.
    fn not_head(&self, key: &str) -> bool {
        key.starts_with(crate::key::RESERVED_PREFIX) || self.changed.contains_key(key)
    }
}

impl KvSnapshot for Behind {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        match self.not_head(key) {
            true => self.version.get(key),
            false => self.head.get(key),
        }
    }

    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        match self.not_head(key) {
            true => self.version.get_range(key, range),
            false => self.head.get_range(key, range),
        }
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        match self.not_head(key) {
            true => self.version.size(key),
            false => self.head.size(key),
        }
    }

    fn with_value(&self, key: &str, read: &mut dyn FnMut(&[u8])) -> Result<bool, StoreError> {
        match self.not_head(key) {
            true => self.version.with_value(key, read),
            false => self.head.with_value(key, read),
        }
    }

    fn with_value_within(&self, key: &str, limit: u64, read: &mut dyn FnMut(&[u8])) -> Result<Option<u64>, StoreError> {
        match self.not_head(key) {
            true => self.version.with_value_within(key, limit, read),
            false => self.head.with_value_within(key, limit, read),
        }
    }

    fn next_key(&self, from: &str, within: &str) -> Result<Option<String>, StoreError> {
        // The head's next key that reads as the head, stepping over the others one by one
        // (there are as many as keys changed since the version, and a few of the engine's).
        // Once past the version's next key, the head cannot come first.
        let in_version = self.version.next_key(from, within)?;
        let mut at = from.to_owned();
        let in_head = loop {
            match self.head.next_key(&at, within)? {
                Some(key) if in_version.as_ref().is_some_and(|v| key >= *v) => break None,
                Some(key) if self.not_head(&key) => at = format!("{key}\0"),
                found => break found,
            }
        };
        Ok(match (in_head, in_version) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        })
    }

    fn keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let mut keys: Vec<String> = self.head.keys(prefix)?.into_iter().filter(|key| !self.not_head(key)).collect();
        keys.extend(self.version.keys(prefix)?);
        // Two sorted runs: the stable sort merges them in one pass.
        keys.sort();
        Ok(keys)
    }
}
