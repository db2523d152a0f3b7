//! The bytes of history: keys under `__zarrdb/h/`, and the values stored there and at the Zarr
//! keys of a database that keeps history (docs/format.md, "History"). Numbers in keys are
//! fixed-width lowercase hexadecimal, so the engines' bytewise order is numeric order and keys stay
//! NUL-free text; numbers in values are little-endian, and every value but an entry ends with a
//! CRC-32C of the bytes before it.

use std::collections::BTreeMap;

use crate::error::StoreError;

/// Where history lives; user stores neither list nor reach it (it is under `__zarrdb/`).
pub(crate) const PREFIX: &str = "__zarrdb/h/";

/// The layout of history in the `meta` record: 1 has `main` alone; 2 may have other branches
/// and merge commits (`ZHC2` records), which a build that reads only 1 would mistake for
/// damage or, worse, collect under. History starts in 1 and moves to 2 when a branch is made.
///
/// 3 keeps a small commit's changes inside its record (`ZHC3`, no `d/` key) and writes `last`
/// only when the newest commit is not `main`'s head (the newest is the greater of the two), so
/// a commit on `main` writes two records where 2 wrote four. A build that reads 2 would take
/// either for damage; this one reads every layout, and its first write to history moves a
/// database to 3.
///
/// 4 leaves `main`'s ref behind its head: a commit on `main` moves the ref only once the head is
/// [`MAIN_REF_EVERY`] commits past it, and `main`'s head is the newest record after the greater
/// of the ref and `last` (every write that sets `last` brings the ref to the head first). A value
/// whose key held none stays at its key whatever its size (but where the engine's commits
/// race, which writes it under its object key: `Recording::large_apart`). A commit on `main` then writes its
/// record and the key it changes, where 3 also wrote the ref and, for a large value, its object
/// key. A build that reads 3 would take `main` to be where its ref stands: this one refuses such
/// a build the database, reads every layout, and its first write to history moves a database
/// to 4.
pub(crate) const LAYOUT_MAIN_ONLY: u32 = 1;
pub(crate) const LAYOUT_BRANCHES: u32 = 2;
pub(crate) const LAYOUT_COMPACT: u32 = 3;
pub(crate) const LAYOUT_LAZY_MAIN: u32 = 4;

/// How far `main`'s head may run ahead of its ref (layout 4): reading the head seeks past the ref
/// once per commit it is behind, and a commit that moves the ref writes one more leaf.
pub(crate) const MAIN_REF_EVERY: u64 = 8;

pub(crate) fn meta_key() -> String {
    format!("{PREFIX}meta")
}

/// The sequence number of the newest commit.
pub(crate) fn last_key() -> String {
    format!("{PREFIX}last")
}

/// The expiry horizon: a commit older than this one that no tag names has expired
/// (`Database::expire`); absent until the first expiry.
pub(crate) fn horizon_key() -> String {
    format!("{PREFIX}e")
}

pub(crate) fn commit_key(seq: u64) -> String {
    format!("{PREFIX}c/{seq:016x}")
}

/// Where the commits' records are (`commit_key`), in the order of their numbers.
pub(crate) fn commits_prefix() -> String {
    format!("{PREFIX}c/")
}

pub(crate) fn changes_key(seq: u64) -> String {
    format!("{PREFIX}d/{seq:016x}")
}

/// Where a value outside its entry is: written there at once when it is larger than
/// [`INLINE_LIMIT`] (or than what the engine keeps with its key, `KvEngine::inline_max`), else
/// copied there when a later commit supersedes it.
pub(crate) fn object_key(entry: &Entry) -> String {
    format!("{PREFIX}o/{:016x}{:08x}", entry.seq, entry.index)
}

/// The entry `key` holds in the oldest version kept (the commit whose parent is 0), once a
/// collection has folded the expired commits before it: that version's state, key by key, so a
/// later collection updates what it changes and never rewrites the rest.
pub(crate) fn base_key(key: &str) -> String {
    format!("{PREFIX}b/{key}")
}

pub(crate) fn base_prefix() -> String {
    format!("{PREFIX}b/")
}

pub(crate) fn objects_prefix() -> String {
    format!("{PREFIX}o/")
}

/// Whether `digits` are `len` lowercase hexadecimal digits, as the keys' numbers are written
/// (so a number parsed back formats to the same key).
fn hex_digits(digits: &str, len: usize) -> bool {
    digits.len() == len && digits.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The commit and index an object key names (the inverse of [`object_key`]); `None` for a key
/// that is not one.
pub(crate) fn parse_object_key(key: &str) -> Option<(u64, u32)> {
    let digits = key.strip_prefix(PREFIX)?.strip_prefix("o/")?;
    if !hex_digits(digits, 24) {
        return None;
    }
    Some((u64::from_str_radix(&digits[..16], 16).ok()?, u32::from_str_radix(&digits[16..], 16).ok()?))
}

/// The commit number a key among the commits names (the inverse of [`commit_key`]); `None`
/// for a key that is not one.
pub(crate) fn parse_commit_key(key: &str) -> Option<u64> {
    parse_numbered(key, "c/")
}

/// The commit number a key among the lists of changes names (the inverse of [`changes_key`]).
pub(crate) fn parse_changes_key(key: &str) -> Option<u64> {
    parse_numbered(key, "d/")
}

fn parse_numbered(key: &str, under: &str) -> Option<u64> {
    let digits = key.strip_prefix(PREFIX)?.strip_prefix(under)?;
    if !hex_digits(digits, 16) {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

pub(crate) fn changes_prefix() -> String {
    format!("{PREFIX}d/")
}

pub(crate) fn branch_key(name: &str) -> String {
    format!("{PREFIX}r/b/{name}")
}

pub(crate) fn tag_key(name: &str) -> String {
    format!("{PREFIX}r/t/{name}")
}

/// The marker a deleted tag leaves: its name is never given to another commit.
pub(crate) fn retired_tag_key(name: &str) -> String {
    format!("{PREFIX}r/x/{name}")
}

pub(crate) fn tags_prefix() -> String {
    format!("{PREFIX}r/t/")
}

pub(crate) fn branches_prefix() -> String {
    format!("{PREFIX}r/b/")
}

/// The failure of a history record that does not decode: only a damaged file holds one.
pub(crate) fn damaged(key: &str, what: &'static str) -> StoreError {
    StoreError::Damaged { backend: "history", operation: "read", key: key.to_owned(), what }
}

/// The changes recorded at `key` say a commit superseded an entry other than the one the commits
/// before it left.
pub(crate) fn superseded_mismatch(key: &str) -> StoreError {
    damaged(key, "a commit's record of what it superseded disagrees with the commits before it")
}

/// Values up to this many bytes are kept in the entry at their Zarr key (one lookup to read, no
/// second key to write); larger ones are written under [`object_key`] and the entry refers to
/// them. An inline value is copied under [`object_key`] only when a later commit supersedes it,
/// so older versions still read it.
pub(crate) const INLINE_LIMIT: usize = 4096;

/// What a Zarr key holds in a database with history: the entry of its value, which names the
/// value by the commit that wrote it and its index there, followed by the value itself when it
/// is inline. A value outside the entry is written once under [`object_key`] and never
/// rewritten, so older versions keep reading it after the key is overwritten.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Whether the value follows the entry at its Zarr key (while no later commit superseded it).
    pub inline: bool,
    /// The commit that wrote the value.
    pub seq: u64,
    /// Its place among the values that commit wrote.
    pub index: u32,
    /// The value's length in bytes.
    pub len: u64,
}

/// An entry's size in bytes: a kind byte (1: the value is elsewhere, 2: it follows), three zero
/// bytes, the index, the commit, the length.
pub(crate) const ENTRY_LEN: usize = 24;

impl Entry {
    pub fn encode(&self) -> [u8; ENTRY_LEN] {
        let mut out = [0u8; ENTRY_LEN];
        out[0] = if self.inline { 2 } else { 1 };
        out[4..8].copy_from_slice(&self.index.to_le_bytes());
        out[8..16].copy_from_slice(&self.seq.to_le_bytes());
        out[16..24].copy_from_slice(&self.len.to_le_bytes());
        out
    }

    /// The entry alone (as the list of a commit's changes holds it).
    pub fn decode(key: &str, bytes: &[u8]) -> Result<Entry, StoreError> {
        let inline = match bytes {
            [1, 0, 0, 0, ..] => false,
            [2, 0, 0, 0, ..] => true,
            _ => return Err(damaged(key, "a key of a database with history holds no entry of its value")),
        };
        if bytes.len() != ENTRY_LEN {
            return Err(damaged(key, "an entry of a database with history has the wrong length"));
        }
        Ok(Entry {
            inline,
            index: u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes")),
            seq: u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes")),
            len: u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes")),
        })
    }

    /// What a Zarr key holds: the entry, and the value when it is inline.
    pub fn decode_head<'a>(key: &str, bytes: &'a [u8]) -> Result<(Entry, &'a [u8]), StoreError> {
        let (head, value) = bytes.split_at(bytes.len().min(ENTRY_LEN));
        let entry = Entry::decode(key, head)?;
        let fits = match entry.inline {
            true => value.len() as u64 == entry.len,
            false => value.is_empty(),
        };
        match fits {
            true => Ok((entry, value)),
            false => Err(damaged(key, "a value of a database with history is not as long as its entry says")),
        }
    }

    /// Whether `other` names the same value.
    pub fn same_value(&self, other: &Entry) -> bool {
        (self.seq, self.index) == (other.seq, other.index)
    }
}

/// One commit: what `log` shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CommitRecord {
    pub seq: u64,
    /// 0 for the first commit.
    pub parent: u64,
    /// The commit merged into the parent by a merge commit ([`CommitRecord::parent`] is the
    /// branch it was made on); 0 for any other commit.
    pub merged: u64,
    /// Microseconds since the Unix epoch; each commit's is later than its parent's.
    pub time_us: u64,
    /// The time of the oldest commit whose changes this record holds: its own, until a
    /// collection folds the changes of expired commits before it into it (so a time between
    /// its parent's and this one's names an expired version).
    pub oldest_us: u64,
    /// Keys written or removed.
    pub changes: u64,
    /// Bytes of the values written.
    pub bytes: u64,
    pub message: String,
    pub author: String,
}

const COMMIT_MAGIC: &[u8; 4] = b"ZHC1";
/// A merge commit's record: [`COMMIT_MAGIC`]'s fields with the merged commit after the parent.
const MERGE_MAGIC: &[u8; 4] = b"ZHC2";
/// A commit's record with its changes (layout 3): [`MERGE_MAGIC`]'s fields (the merged commit 0
/// for any other commit), then the length (u32) and bytes of the changes as [`encode_changes`]
/// writes them under [`changes_key`], which such a commit does not have.
const INLINE_MAGIC: &[u8; 4] = b"ZHC3";
/// The most bytes of changes a commit's record holds (layout 3); more go under [`changes_key`],
/// so a walk along the commits (a log, an ancestry) never reads a large list it does not need.
pub(crate) const INLINE_CHANGES: usize = 1536;
const CHANGES_MAGIC: &[u8; 4] = b"ZHD1";
const META_MAGIC: &[u8; 4] = b"ZHM1";
const REF_MAGIC: &[u8; 4] = b"ZHR1";

/// Append the CRC-32C of everything before it.
fn seal(mut out: Vec<u8>) -> Vec<u8> {
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The bytes before the CRC of a sealed value that starts with `magic`, or why not.
fn unseal<'a>(key: &str, bytes: &'a [u8], magic: &[u8; 4]) -> Result<&'a [u8], StoreError> {
    unseal_any(key, bytes, &[magic]).map(|(_, body)| body)
}

/// [`unseal`] for a value that may start with any of `magics`: which one, and the bytes
/// between it and the CRC.
fn unseal_any<'a>(key: &str, bytes: &'a [u8], magics: &[&[u8; 4]]) -> Result<(usize, &'a [u8]), StoreError> {
    let Some(body_len) = bytes.len().checked_sub(4).filter(|n| *n >= 4) else {
        return Err(damaged(key, "a history record is cut short"));
    };
    let (body, crc) = bytes.split_at(body_len);
    if crc32c::crc32c(body).to_le_bytes() != crc {
        return Err(damaged(key, "a history record fails its checksum"));
    }
    match magics.iter().position(|magic| &body[..4] == *magic) {
        Some(which) => Ok((which, &body[4..])),
        None => Err(damaged(key, "a history record of another kind")),
    }
}

/// Reads little-endian fields off a record, failing (never panicking) when it ends too soon.
struct Reader<'k, 'a> {
    key: &'k str,
    rest: &'a [u8],
}

impl<'a> Reader<'_, 'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], StoreError> {
        if self.rest.len() < n {
            return Err(damaged(self.key, "a history record ends inside a field"));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32, StoreError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    fn u64(&mut self) -> Result<u64, StoreError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    fn text(&mut self) -> Result<String, StoreError> {
        let len = self.u32()? as usize;
        let bytes = self.take(len)?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| damaged(self.key, "a history record holds text that is not UTF-8"))
    }

    fn end(&self) -> Result<(), StoreError> {
        match self.rest.is_empty() {
            true => Ok(()),
            false => Err(damaged(self.key, "a history record holds bytes past its fields")),
        }
    }
}

fn put_text(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

impl CommitRecord {
    /// The record alone, its changes under [`changes_key`] (or, for the oldest commit kept, in
    /// the base). A commit that merged nothing keeps the first layout's record.
    pub fn encode(&self) -> Vec<u8> {
        self.encode_with(None)
    }

    /// The record, with `changes` (as [`encode_changes`] writes them) inside when given.
    pub fn encode_with(&self, changes: Option<&[u8]>) -> Vec<u8> {
        let mut out = match (changes, self.merged) {
            (Some(_), _) => INLINE_MAGIC.to_vec(),
            (None, 0) => COMMIT_MAGIC.to_vec(),
            (None, _) => MERGE_MAGIC.to_vec(),
        };
        let merged = (changes.is_some() || self.merged != 0).then_some(self.merged);
        let numbers = [Some(self.seq), Some(self.parent), merged, Some(self.time_us), Some(self.oldest_us)];
        for n in numbers.into_iter().flatten().chain([self.changes, self.bytes]) {
            out.extend_from_slice(&n.to_le_bytes());
        }
        put_text(&mut out, &self.message);
        put_text(&mut out, &self.author);
        if let Some(changes) = changes {
            out.extend_from_slice(&(changes.len() as u32).to_le_bytes());
            out.extend_from_slice(changes);
        }
        seal(out)
    }

    pub fn decode(key: &str, bytes: &[u8]) -> Result<CommitRecord, StoreError> {
        CommitRecord::decode_with_changes(key, bytes).map(|(record, _)| record)
    }

    /// The record, and the bytes of its changes when it holds them (layout 3's small commits).
    pub fn decode_with_changes<'a>(key: &str, bytes: &'a [u8]) -> Result<(CommitRecord, Option<&'a [u8]>), StoreError> {
        let (which, rest) = unseal_any(key, bytes, &[COMMIT_MAGIC, MERGE_MAGIC, INLINE_MAGIC])?;
        let mut r = Reader { key, rest };
        let record = CommitRecord {
            seq: r.u64()?,
            parent: r.u64()?,
            merged: match which {
                0 => 0,
                _ => r.u64()?,
            },
            time_us: r.u64()?,
            oldest_us: r.u64()?,
            changes: r.u64()?,
            bytes: r.u64()?,
            message: r.text()?,
            author: r.text()?,
        };
        let changes = match which {
            2 => {
                let len = r.u32()? as usize;
                Some(r.take(len)?)
            }
            _ => None,
        };
        r.end()?;
        Ok((record, changes))
    }
}

/// What makes `commit` with `changes`: its record under [`commit_key`], holding the changes
/// when they are small, else beside them under [`changes_key`]. A collection that `rewrites` a
/// commit removes the list the record now holds; a new commit has none to remove.
pub(crate) fn commit_puts(
    commit: &CommitRecord,
    changes: &BTreeMap<String, Change>,
    rewrites: bool,
) -> Vec<(String, Option<Vec<u8>>)> {
    let encoded = encode_changes(changes);
    match encoded.len() <= INLINE_CHANGES {
        true => {
            let mut puts = vec![(commit_key(commit.seq), Some(commit.encode_with(Some(&encoded))))];
            puts.extend(rewrites.then(|| (changes_key(commit.seq), None)));
            puts
        }
        false => vec![(commit_key(commit.seq), Some(commit.encode())), (changes_key(commit.seq), Some(encoded))],
    }
}

/// What a commit did to one key: the entry it superseded (`None`: the key was absent) and the
/// entry it wrote (`None`: it removed the key). The superseded entries make a diff along the
/// history cost what changed, and tell a collection which values a commit made unreachable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Change {
    pub old: Option<Entry>,
    pub new: Option<Entry>,
}

/// The changes of one commit, in key order: per key its length (u32) and bytes, a flags byte
/// (bit 0: a new entry follows, bit 1: a superseded entry follows), then those entries.
pub(crate) fn encode_changes(changes: &BTreeMap<String, Change>) -> Vec<u8> {
    let keys: usize = changes.keys().map(|k| 4 + k.len() + 1 + 2 * ENTRY_LEN).sum();
    let mut out = Vec::with_capacity(16 + keys);
    out.extend_from_slice(CHANGES_MAGIC);
    out.extend_from_slice(&(changes.len() as u64).to_le_bytes());
    for (key, change) in changes {
        put_text(&mut out, key);
        out.push(u8::from(change.new.is_some()) | u8::from(change.old.is_some()) << 1);
        for entry in [change.new, change.old].into_iter().flatten() {
            out.extend_from_slice(&entry.encode());
        }
    }
    seal(out)
}

/// Call `each` with every change recorded under `key`, in key order.
pub(crate) fn decode_changes(key: &str, bytes: &[u8], mut each: impl FnMut(String, Change)) -> Result<(), StoreError> {
    let mut r = Reader { key, rest: unseal(key, bytes, CHANGES_MAGIC)? };
    let count = r.u64()?;
    for _ in 0..count {
        let changed = r.text()?;
        let flags = r.take(1)?[0];
        if flags > 3 {
            return Err(damaged(key, "a history record holds an unknown kind of change"));
        }
        let mut entry = |present: bool| -> Result<Option<Entry>, StoreError> {
            present.then(|| r.take(ENTRY_LEN).and_then(|bytes| Entry::decode(key, bytes))).transpose()
        };
        let new = entry(flags & 1 != 0)?;
        let old = entry(flags & 2 != 0)?;
        each(changed, Change { old, new });
    }
    r.end()
}

pub(crate) fn encode_meta(layout: u32) -> Vec<u8> {
    let mut out = META_MAGIC.to_vec();
    out.extend_from_slice(&layout.to_le_bytes());
    seal(out)
}

/// Check the `meta` record: the layout, when this build reads it.
pub(crate) fn check_meta(key: &str, bytes: &[u8]) -> Result<u32, StoreError> {
    let mut r = Reader { key, rest: unseal(key, bytes, META_MAGIC)? };
    let layout = r.u32()?;
    r.end()?;
    match layout {
        LAYOUT_MAIN_ONLY | LAYOUT_BRANCHES | LAYOUT_COMPACT | LAYOUT_LAZY_MAIN => Ok(layout),
        _ => Err(damaged(key, "history in a layout this build does not read")),
    }
}

/// A ref (a branch, a tag, a deleted tag's marker, the newest commit): a commit's sequence number.
pub(crate) fn encode_ref(seq: u64) -> Vec<u8> {
    let mut out = REF_MAGIC.to_vec();
    out.extend_from_slice(&seq.to_le_bytes());
    seal(out)
}

pub(crate) fn decode_ref(key: &str, bytes: &[u8]) -> Result<u64, StoreError> {
    let mut r = Reader { key, rest: unseal(key, bytes, REF_MAGIC)? };
    let seq = r.u64()?;
    r.end()?;
    Ok(seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damage_is_refused() {
        let record = CommitRecord {
            seq: 7,
            parent: 6,
            merged: 0,
            time_us: 1 << 50,
            oldest_us: 1 << 49,
            changes: 3,
            bytes: 99,
            message: "fix \u{e9}".into(),
            author: String::new(),
        };
        let bytes = record.encode();
        assert_eq!(CommitRecord::decode("k", &bytes).unwrap(), record);
        for cut in 0..bytes.len() {
            assert!(CommitRecord::decode("k", &bytes[..cut]).is_err(), "cut at {cut}");
        }
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x10;
            assert!(CommitRecord::decode("k", &flipped).is_err(), "flip at {at}");
        }
        let merge = CommitRecord { merged: 3, ..record.clone() };
        let bytes = merge.encode();
        assert_eq!(&bytes[..4], MERGE_MAGIC);
        assert_eq!(CommitRecord::decode("k", &bytes).unwrap(), merge);
        for cut in 0..bytes.len() {
            assert!(CommitRecord::decode("k", &bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut changes = BTreeMap::new();
        let far = Entry { inline: false, seq: 7, index: 2, len: 5 };
        let near = Entry { inline: true, seq: 7, index: 3, len: 2 };
        changes.insert("a/c/0".to_owned(), Change { old: None, new: Some(far) });
        changes.insert("a/c/1".to_owned(), Change { old: Some(far), new: Some(near) });
        changes.insert("a/zarr.json".to_owned(), Change { old: Some(near), new: None });
        let bytes = encode_changes(&changes);
        let mut back = BTreeMap::new();
        decode_changes("k", &bytes, |k, e| {
            back.insert(k, e);
        })
        .unwrap();
        assert_eq!(back, changes);
        assert!(decode_changes("k", &record.encode(), |_, _| ()).is_err(), "a record of another kind");

        // Layout 3: a small list inside the record, a large one beside it.
        let small = commit_puts(&merge, &changes, false);
        assert_eq!(small.len(), 1, "the record alone");
        let held = small[0].1.as_ref().unwrap();
        assert_eq!(&held[..4], INLINE_MAGIC);
        let (decoded, inline) = CommitRecord::decode_with_changes("k", held).unwrap();
        assert_eq!((decoded, inline), (merge.clone(), Some(&encode_changes(&changes)[..])));
        for cut in 0..held.len() {
            assert!(CommitRecord::decode("k", &held[..cut]).is_err(), "cut at {cut}");
        }
        let rewritten = commit_puts(&record, &changes, true);
        assert_eq!(rewritten[1], (changes_key(7), None), "a rewrite removes the list beside");
        let many: BTreeMap<String, Change> =
            (0..60).map(|i| (format!("a/c/{i:03}"), Change { old: None, new: Some(far) })).collect();
        let large = commit_puts(&record, &many, false);
        assert_eq!(large[0], (commit_key(7), Some(record.encode())));
        assert_eq!(large[1], (changes_key(7), Some(encode_changes(&many))));
        assert_eq!(decode_ref("k", &encode_ref(42)).unwrap(), 42);
        assert_eq!(parse_object_key(&object_key(&far)), Some((7, 2)));
        for bad in ["__zarrdb/h/o/", "__zarrdb/h/o/000000000000000700000002x", "__zarrdb/h/c/000000000000000700000002"]
        {
            assert_eq!(parse_object_key(bad), None, "{bad}");
        }
        assert_eq!(parse_commit_key(&commit_key(0x7a)), Some(0x7a));
        assert_eq!(parse_changes_key(&changes_key(0x7a)), Some(0x7a));
        assert_eq!(parse_changes_key(&commit_key(0x7a)), None);
        for bad in [
            "__zarrdb/h/c/",
            "__zarrdb/h/c/+00000000000007a",
            "__zarrdb/h/c/000000000000007A",
            "__zarrdb/h/d/000000000000007a",
        ] {
            assert_eq!(parse_commit_key(bad), None, "{bad}");
        }
        assert_eq!(check_meta("k", &encode_meta(LAYOUT_BRANCHES)).unwrap(), LAYOUT_BRANCHES);
        assert_eq!(check_meta("k", &encode_meta(LAYOUT_LAZY_MAIN)).unwrap(), LAYOUT_LAZY_MAIN);
        assert!(check_meta("k", &encode_meta(5)).is_err(), "a layout from a later build");
        assert!(Entry::decode("k", &[1, 0, 0]).is_err());
        let inline = Entry { inline: true, seq: 9, index: 0, len: 3 };
        let mut head = inline.encode().to_vec();
        head.extend_from_slice(b"abc");
        assert_eq!(Entry::decode_head("k", &head).unwrap(), (inline, &b"abc"[..]));
        assert!(Entry::decode_head("k", &head[..head.len() - 1]).is_err(), "a value cut short");
        let far = Entry { inline: false, ..inline };
        assert!(Entry::decode_head("k", &[&far.encode()[..], b"x"].concat()).is_err(), "bytes after a reference");
    }

    #[test]
    fn a_huge_count_fails_without_allocating() {
        let mut out = CHANGES_MAGIC.to_vec();
        out.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode_changes("k", &seal(out), |_, _| ()).is_err());
    }
}
