//! History: every commit of a database that keeps it becomes a version that can be read later,
//! named by tags, on any engine (docs/architecture.md, "History").
//!
//! [`HistoryEngine`] wraps the engine of such a database and is itself a [`KvEngine`], so
//! transactions, group commit, snapshots and bulk writes run above it unchanged. Its commit turns
//! the batch it is given into the same changes in history's layout, in the same engine
//! transaction:
//! - the Zarr key holds a small entry naming its value ([`record::Entry`]), followed by the value
//!   when it is small; a larger value is written once, under `__zarrdb/h/o/<commit><index>`, and
//!   never rewritten; a small one is copied there when a later commit supersedes it;
//! - the commit's record (parent, time, message) with the list of keys it changed and their new
//!   entries (beside the record when the list is long), and the branch's ref, are written beside
//!   them; `last`, the newest commit, only when that is not `main`'s head ([`newest`]).
//!
//! The head reads through the entries; an older version is the fold of the changes of every
//! commit on its ancestry. The commit's parent is read under the engine's writer lock (taken
//! here when the caller holds none), so no commit of another process lands in between.

mod collect;
mod conflict;
mod graph;
pub(crate) mod merge;
mod record;
mod view;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use record::{CommitRecord, Entry, PREFIX};

use super::kv::{CommitNote, KvBulk, KvEngine, KvSnapshot, KvWriter, WriteBatch};
use crate::error::{CompactError, StoreError};
use crate::key::RESERVED_PREFIX;

pub(crate) use collect::{Collected, STEP_CHANGES};
#[cfg(test)]
pub(crate) use record::objects_prefix;
pub(crate) use record::{decode_changes, Change, CommitRecord as Commit, Entry as HistoryEntry};

/// The branch whose head the Zarr keys hold, and the one commits go to unless a store is opened
/// on another.
pub(crate) const MAIN: &str = "main";

/// A version's entries, by Zarr key.
pub(crate) type Entries = BTreeMap<String, Entry>;

/// The branch an engine's commits go to.
enum Line {
    /// `main`: a commit writes the Zarr keys.
    Main,
    /// Another branch: a commit is kept in history alone (every value under its object key), and
    /// the branch's head is read as a version. `state` keeps the entries of the last head read,
    /// so the next commit or snapshot folds only what changed since.
    Branch { name: String, state: Mutex<Option<(u64, Arc<Entries>)>> },
}

/// An engine whose database keeps history.
pub(crate) struct HistoryEngine {
    inner: Arc<dyn KvEngine>,
    line: Line,
    /// Where the engine's snapshots see the live file (sled), a branch's fold of history records
    /// holds this for reading and a collection step's commit, which rewrites and removes records,
    /// for writing, so a fold never walks records half collected. Shared by every line of the
    /// engine; sled opens a file once per process, so a lock of the process is enough.
    folds: Arc<RwLock<()>>,
}

/// Read a ref or counter stored under `key`; `main`'s is its head ([`main_ref`]).
fn read_ref(snap: &dyn KvSnapshot, key: &str) -> Result<Option<u64>, StoreError> {
    if key == record::branch_key(MAIN) {
        return Ok(main_ref(snap)?.map(|main| main.head));
    }
    stored_ref(snap, key)
}

/// The ref or counter as stored under `key`.
fn stored_ref(snap: &dyn KvSnapshot, key: &str) -> Result<Option<u64>, StoreError> {
    snap.get(key)?.map(|bytes| record::decode_ref(key, &bytes)).transpose()
}

/// `main`'s ref as stored, and `main`'s head.
#[derive(Clone, Copy)]
struct MainRef {
    stored: u64,
    head: u64,
}

/// Where `main` is (layout 4): a commit on `main` moves the ref only now and then, and sets no
/// `last`, while every other commit sets `last` and brings the ref to `main`'s head first. So the
/// records after the greater of the two are `main`'s newest commits, and its head is the newest
/// of them, or the ref when there are none. (In layouts 1 to 3 there are none.)
///
/// Where the snapshot is the live file (sled), commits land while the records are walked: a
/// walk that finds more records past the ref than a commit lets it reads the ref and `last`
/// again, and starts over when either moved (a commit moves the ref in the same atomic batch
/// that would put its record too far past it); unmoved, the records are damaged.
fn main_ref(snap: &dyn KvSnapshot) -> Result<Option<MainRef>, StoreError> {
    let mut tries = 0;
    loop {
        let Some(stored) = stored_ref(snap, &record::branch_key(MAIN))? else { return Ok(None) };
        let last = stored_ref(snap, &record::last_key())?.unwrap_or(0);
        match walk_main(snap, stored, last)? {
            Ok(head) => return Ok(Some(MainRef { stored, head })),
            Err(damage) => {
                let moved = stored_ref(snap, &record::branch_key(MAIN))? != Some(stored)
                    || stored_ref(snap, &record::last_key())?.unwrap_or(0) != last;
                tries += 1;
                if !moved || tries >= MAIN_REF_TRIES {
                    return Err(damage);
                }
            }
        }
    }
}

/// How often [`main_ref`] starts over on a live file whose `main` keeps moving.
const MAIN_REF_TRIES: u32 = 64;

/// `main`'s head from its ref `stored` and `last`: the newest record after the greater of the
/// two; `Err` inside when more records follow than a commit lets it (damage, or on a live file
/// commits landing meanwhile).
fn walk_main(snap: &dyn KvSnapshot, stored: u64, last: u64) -> Result<Result<u64, StoreError>, StoreError> {
    let prefix = record::commits_prefix();
    let mut head = stored;
    // A commit moves the ref before `main` runs this far past it: more is damage, and bounds the
    // walk whatever a damaged file holds.
    for _ in 0..record::MAIN_REF_EVERY {
        let Some(after) = head.max(last).checked_add(1) else { break };
        let Some(found) = snap.next_key(&record::commit_key(after), &prefix)? else {
            return Ok(Ok(head));
        };
        head = record::parse_commit_key(&found)
            .ok_or_else(|| record::damaged(&found, "a key among the commits' records names no commit"))?;
    }
    match head.max(last).checked_add(1).map(|after| snap.next_key(&record::commit_key(after), &prefix)).transpose()? {
        Some(Some(found)) => {
            Ok(Err(record::damaged(&found, "main's head runs further past its ref than a commit lets it")))
        }
        _ => Ok(Ok(head)),
    }
}

/// Bring `main`'s ref to its head, into `puts`, when it is behind: before a write sets `last`
/// (which would hide the commits after the ref) or moves the ref itself.
fn settle_main(snap: &dyn KvSnapshot, puts: &mut impl Extend<(String, Option<Vec<u8>>)>) -> Result<(), StoreError> {
    if let Some(main) = main_ref(snap)?.filter(|main| main.stored != main.head) {
        puts.extend([(record::branch_key(MAIN), Some(record::encode_ref(main.head)))]);
    }
    Ok(())
}

/// The number of the newest commit made (numbers are never given out twice): the greater of
/// `last` and `main`'s head, since a commit on `main` leaves `last` as it was (layout 3).
fn newest(snap: &dyn KvSnapshot) -> Result<Option<u64>, StoreError> {
    let last = read_ref(snap, &record::last_key())?;
    let main = read_ref(snap, &record::branch_key(MAIN))?;
    Ok(last.max(main))
}

/// The `meta` record that moves a database's history to the latest layout, when `snap` shows an
/// older one: every write to history by this build makes records only it reads.
fn upgrade(snap: &dyn KvSnapshot) -> Result<Option<(String, Vec<u8>)>, StoreError> {
    let key = record::meta_key();
    let meta = snap.get(&key)?.ok_or_else(|| record::damaged(&key, "the history of the database is missing"))?;
    Ok((record::check_meta(&key, &meta)? < record::LAYOUT_LAZY_MAIN)
        .then(|| (key, record::encode_meta(record::LAYOUT_LAZY_MAIN))))
}

/// [`upgrade`], put into `batch` when there is one.
fn upgrade_into(snap: &dyn KvSnapshot, batch: &mut WriteBatch) -> Result<(), StoreError> {
    if let Some((key, meta)) = upgrade(snap)? {
        batch.puts.insert(key, Some(meta));
    }
    Ok(())
}

fn read_commit(snap: &dyn KvSnapshot, seq: u64) -> Result<Option<CommitRecord>, StoreError> {
    let key = record::commit_key(seq);
    let Some(bytes) = snap.get(&key)? else { return Ok(None) };
    let commit = CommitRecord::decode(&key, &bytes)?;
    match commit.seq == seq {
        true => Ok(Some(commit)),
        false => Err(record::damaged(&key, "a commit record holds another commit's number")),
    }
}

/// The changes commit `seq` recorded, in key order: in its record, or beside it.
fn changes_of(snap: &dyn KvSnapshot, seq: u64) -> Result<Vec<(String, Change)>, StoreError> {
    let mut changes = Vec::new();
    let at = record::commit_key(seq);
    let held = snap.get(&at)?.ok_or_else(|| record::damaged(&at, "the commit whose changes are read is missing"))?;
    if let (_, Some(inline)) = CommitRecord::decode_with_changes(&at, &held)? {
        record::decode_changes(&at, inline, |changed, change| changes.push((changed, change)))?;
        return Ok(changes);
    }
    let key = record::changes_key(seq);
    let bytes = snap.get(&key)?.ok_or_else(|| record::damaged(&key, "the changes of a commit are missing"))?;
    record::decode_changes(&key, &bytes, |changed, change| changes.push((changed, change)))?;
    Ok(changes)
}

/// The state of the oldest version kept (the commit whose parent is 0), by key: empty until a
/// collection folds expired commits into it.
fn base_entries(snap: &dyn KvSnapshot) -> Result<BTreeMap<String, Entry>, StoreError> {
    let prefix = record::base_prefix();
    let mut entries = BTreeMap::new();
    for key in snap.keys(&prefix)? {
        // sled's reads see the live tree: a key gone since the listing is skipped.
        if let Some(bytes) = snap.get(&key)? {
            entries.insert(key[prefix.len()..].to_owned(), Entry::decode(&key, &bytes)?);
        }
    }
    Ok(entries)
}

/// The commits from `at` down to the oldest kept, newest first.
fn ancestry_of(snap: &dyn KvSnapshot, at: &CommitRecord) -> Result<Vec<CommitRecord>, StoreError> {
    let mut chain = vec![at.clone()];
    while let Some(parent) = read::parent_of(snap, chain.last().expect("never empty"))? {
        chain.push(parent);
    }
    Ok(chain)
}

fn now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// The commit branch `name` points at, if it exists.
fn head_of(snap: &dyn KvSnapshot, name: &str) -> Result<Option<CommitRecord>, StoreError> {
    let Some(head) = read_ref(snap, &record::branch_key(name))? else { return Ok(None) };
    let missing = || record::damaged(&record::commit_key(head), "the commit a branch points at is missing");
    read_commit(snap, head)?.ok_or_else(missing).map(Some)
}

/// Where a commit's changes go.
enum Target {
    /// `main`: the Zarr keys hold its head.
    Head,
    /// Another branch, whose head holds these entries.
    Branch { name: String, state: Arc<Entries> },
}

impl Target {
    /// The entry `key` holds on the branch before the commit. On `main` a small value that the
    /// commit supersedes is copied under its object key (`keep`), so older versions still read it.
    fn old(
        &self,
        snap: &dyn KvSnapshot,
        key: &str,
        keep: &mut dyn FnMut(String, Vec<u8>) -> Result<(), StoreError>,
    ) -> Result<Option<Entry>, StoreError> {
        match self {
            Target::Head => supersede(snap, key, keep),
            Target::Branch { state, .. } => Ok(state.get(key).copied()),
        }
    }

    /// The keys under `prefix` on the branch (the Zarr keys, and bookkeeping, on `main`).
    fn keys(&self, snap: &dyn KvSnapshot, prefix: &str) -> Result<Vec<String>, StoreError> {
        match self {
            Target::Head => snap.keys(prefix),
            Target::Branch { state, .. } => {
                let from = (std::ops::Bound::Included(prefix), std::ops::Bound::Unbounded);
                Ok(state.range::<str, _>(from).map(|(k, _)| k).take_while(|k| k.starts_with(prefix)).cloned().collect())
            }
        }
    }
}

/// The state a commit builds on, read under the writer lock.
struct Tip {
    /// The newest commit of the database (on any branch).
    last: u64,
    /// The commit the branch points at, and its record.
    parent: CommitRecord,
    target: Target,
    /// Where `main` is.
    main: MainRef,
}

impl Tip {
    /// `main`'s.
    fn read(snap: &dyn KvSnapshot) -> Result<Tip, StoreError> {
        let main = Tip::main(snap)?;
        let missing = || record::damaged(&record::commit_key(main.head), "the commit a branch points at is missing");
        let parent = read_commit(snap, main.head)?.ok_or_else(missing)?;
        Tip::with(snap, parent, Target::Head, main)
    }

    fn on(snap: &dyn KvSnapshot, parent: CommitRecord, target: Target) -> Result<Tip, StoreError> {
        Tip::with(snap, parent, target, Tip::main(snap)?)
    }

    fn main(snap: &dyn KvSnapshot) -> Result<MainRef, StoreError> {
        main_ref(snap)?.ok_or_else(|| record::damaged(&record::branch_key(MAIN), "the main branch is missing"))
    }

    fn with(snap: &dyn KvSnapshot, parent: CommitRecord, target: Target, main: MainRef) -> Result<Tip, StoreError> {
        let last = stored_ref(snap, &record::last_key())?.unwrap_or(0).max(main.head);
        if last < parent.seq {
            return Err(record::damaged(&record::last_key(), "the newest commit is older than a branch's"));
        }
        Ok(Tip { last, parent, target, main })
    }

    /// The number the next commit takes; refused when its record exists already (a damaged or
    /// rolled-back `last` would otherwise make the commit overwrite history).
    fn next_seq(&self, snap: &dyn KvSnapshot) -> Result<u64, StoreError> {
        let seq = self.last.checked_add(1).ok_or_else(|| StoreError::Unsupported {
            store: "database with history",
            operation: "a commit past the 2^64th",
        })?;
        match snap.size(&record::commit_key(seq))? {
            Some(_) => Err(record::damaged(&record::last_key(), "the next commit's number is taken")),
            None => Ok(seq),
        }
    }
}

/// What a Zarr key holds for a new value (its entry, with the value when inline), and the
/// value's own key and bytes when it is too large to follow the entry.
type Placed = (Vec<u8>, Option<(String, Vec<u8>)>);

/// Changes being turned into history's layout: the values, the entries at the Zarr keys, and
/// the list of what changed.
struct Recording {
    seq: u64,
    next_index: u32,
    bytes: u64,
    /// By key, unordered while the commit is recorded (a bulk write records a change per value,
    /// and a hash map takes each in constant time); put in key order once, by `finish`.
    changes: HashMap<String, Change>,
    /// Values this commit wrote under their own keys and then replaced itself (a bulk write
    /// that sets a key twice, or sets and erases it): no version reads them, so they are deleted.
    dropped: Vec<Entry>,
    /// Whether a large value goes under its object key even when its key held none: where
    /// commits race (a bucket database), so its bytes do not hold the commit's number and a
    /// commit tried again over a new head names the packs its first try uploaded.
    large_apart: bool,
    /// The longest value kept in its entry ([`record::INLINE_LIMIT`], or less where the engine
    /// stores shorter values apart: a longer one copied out when superseded would be stored twice).
    inline_limit: usize,
}

impl Recording {
    fn new(seq: u64, engine: &dyn KvEngine) -> Recording {
        Recording {
            seq,
            next_index: 0,
            bytes: 0,
            changes: HashMap::new(),
            dropped: Vec::new(),
            large_apart: engine.commits_race(),
            inline_limit: engine
                .inline_max()
                .map_or(record::INLINE_LIMIT, |max| max.saturating_sub(record::ENTRY_LEN).min(record::INLINE_LIMIT)),
        }
    }

    /// Note that `key` changes from `old` (what it held before the commit) to `new`; a key
    /// changed twice in one commit keeps the entry it held before.
    fn change(&mut self, key: &str, old: Option<Entry>, new: Option<Entry>) {
        match self.changes.get_mut(key) {
            Some(change) => {
                if let Some(replaced) = std::mem::replace(&mut change.new, new) {
                    if !replaced.inline {
                        self.dropped.push(replaced);
                    }
                }
            }
            None => {
                self.changes.insert(key.to_owned(), Change { old, new });
            }
        }
    }

    /// What `key`, which held `old`, holds once it is given `value`, and the value's own key
    /// when it is too large to stay in the entry.
    fn put(&mut self, key: &str, old: Option<Entry>, value: Vec<u8>, inline: bool) -> Result<Placed, StoreError> {
        let index = self.next_index;
        self.next_index = index.checked_add(1).ok_or_else(|| StoreError::Unsupported {
            store: "database with history",
            operation: "a commit of more than 4,294,967,295 values",
        })?;
        let len = value.len();
        // A value whose key held none stays at its key whatever its size, as without history: a
        // new key is then one place to write (except where commits race: `large_apart`). A
        // value that supersedes another goes under its object key when it is large, so
        // rewriting a key copies no large value out again.
        let entry = Entry {
            inline: inline && (len <= self.inline_limit || (old.is_none() && !self.large_apart)),
            seq: self.seq,
            index,
            len: len as u64,
        };
        self.bytes = self.bytes.saturating_add(len as u64);
        self.change(key, old, Some(entry));
        Ok(match entry.inline {
            true => ([&entry.encode()[..], &value].concat(), None),
            false => (entry.encode().to_vec(), Some((record::object_key(&entry), value))),
        })
    }

    /// Whether the commit changes no key once keys made and removed within it are left out
    /// (they change nothing any version sees).
    fn changes_nothing(&mut self) -> bool {
        self.changes.retain(|_, change| change.old.is_some() || change.new.is_some());
        self.changes.is_empty()
    }

    /// The bookkeeping that makes the changes commit `seq`, on top of `tip`'s branch: its
    /// record (and changes), the branch, and `last` unless the branch is `main` (whose head is
    /// then the newest commit).
    fn finish(self, tip: &Tip, note: CommitNote) -> Vec<(String, Option<Vec<u8>>)> {
        // Later than the parent's, so a time names one place on a branch.
        let time_us = now_us().max(tip.parent.time_us.saturating_add(1));
        let commit = CommitRecord {
            seq: self.seq,
            parent: tip.parent.seq,
            merged: 0,
            time_us,
            oldest_us: time_us,
            changes: self.changes.len() as u64,
            bytes: self.bytes,
            message: note.message,
            author: note.author,
        };
        let changes: BTreeMap<String, Change> = self.changes.into_iter().collect();
        let mut puts = record::commit_puts(&commit, &changes, false);
        let main = record::branch_key(MAIN);
        match &tip.target {
            // Layout 4: `main`'s head is found past its ref, so the ref moves now and then.
            Target::Head => {
                if self.seq.saturating_sub(tip.main.stored) >= record::MAIN_REF_EVERY {
                    puts.push((main, Some(record::encode_ref(self.seq))));
                }
            }
            Target::Branch { name, .. } => {
                if tip.main.stored != tip.main.head {
                    puts.push((main, Some(record::encode_ref(tip.main.head))));
                }
                puts.push((record::branch_key(name), Some(record::encode_ref(self.seq))));
                puts.push((record::last_key(), Some(record::encode_ref(self.seq))));
            }
        }
        puts
    }
}

/// Keep the value `key` holds in `snap` readable by the versions that hold it, now that this
/// commit supersedes it: an inline value is copied under its object key (`keep`). The entry
/// `key` held, if any.
fn supersede(
    snap: &dyn KvSnapshot,
    key: &str,
    keep: &mut dyn FnMut(String, Vec<u8>) -> Result<(), StoreError>,
) -> Result<Option<Entry>, StoreError> {
    let mut found = None;
    snap.with_value(key, &mut |bytes| {
        let decoded = Entry::decode_head(key, bytes);
        found = Some(decoded.map(|(entry, value)| (entry, entry.inline.then(|| value.to_vec()))));
    })?;
    let Some((entry, inline)) = found.transpose()? else { return Ok(None) };
    if let Some(value) = inline {
        keep(record::object_key(&entry), value)?;
    }
    Ok(Some(entry))
}

/// Refuse a Zarr key whose entry in the base (`b/`) would be longer than the engine holds: a
/// collection could never fold it.
fn check_key_len(max_key_len: Option<usize>, key: &str) -> Result<(), StoreError> {
    match max_key_len {
        Some(max) if record::base_key(key).len() > max => Err(StoreError::InvalidKey {
            key: key.to_owned(),
            reason: "too long for this engine in a database with history, which keeps it under a longer key of its own",
        }),
        _ => Ok(()),
    }
}

impl HistoryEngine {
    /// Wrap `inner`, whose database keeps history (its format record says so); its `meta`
    /// record must be one this build reads.
    pub fn open(inner: Arc<dyn KvEngine>) -> Result<HistoryEngine, StoreError> {
        let snap = inner.snapshot()?;
        let key = record::meta_key();
        let meta = snap.get(&key)?.ok_or_else(|| record::damaged(&key, "the history of the database is missing"))?;
        record::check_meta(&key, &meta)?;
        drop(snap);
        Ok(HistoryEngine { inner, line: Line::Main, folds: Arc::default() })
    }

    /// The same database, committing to branch `name` (which need not exist yet: a commit or a
    /// snapshot fails until it does).
    pub fn on_branch(&self, name: &str) -> HistoryEngine {
        let line = match name {
            MAIN => Line::Main,
            _ => Line::Branch { name: name.to_owned(), state: Mutex::new(None) },
        };
        HistoryEngine { inner: self.inner.clone(), line, folds: self.folds.clone() }
    }

    /// The branch this engine commits to.
    pub fn branch(&self) -> &str {
        match &self.line {
            Line::Main => MAIN,
            Line::Branch { name, .. } => name,
        }
    }

    /// Where the next commit goes, from `snap` (the latest state, under the writer lock for a
    /// commit).
    fn tip(&self, snap: &dyn KvSnapshot) -> Result<Tip, StoreError> {
        let Line::Branch { name, state } = &self.line else { return Tip::read(snap) };
        let head = head_of(snap, name)?.ok_or_else(|| StoreError::BranchMissing { branch: name.clone() })?;
        let mut cached = state.lock();
        let entries = match cached.take() {
            Some((seq, entries)) if seq == head.seq => entries,
            // Fold only the commits since the last head read, when the branch moved on from it.
            Some((seq, mut entries)) => match read_commit(snap, seq)? {
                Some(from) => match read::changes_between(snap, &from, &head)? {
                    Some(changes) => {
                        let map = Arc::make_mut(&mut entries);
                        for (key, change) in changes {
                            match change.new {
                                Some(entry) => map.insert(key, entry),
                                None => map.remove(&key),
                            };
                        }
                        entries
                    }
                    None => Arc::new(read::entries(snap, &head)?),
                },
                None => Arc::new(read::entries(snap, &head)?),
            },
            None => Arc::new(read::entries(snap, &head)?),
        };
        *cached = Some((head.seq, entries.clone()));
        drop(cached);
        Tip::on(snap, head, Target::Branch { name: name.clone(), state: entries })
    }

    /// The bookkeeping that starts history in a database: the first commit (an empty version)
    /// on `main`. Written with the format record that says the database keeps history.
    pub fn start() -> Vec<(String, Vec<u8>)> {
        let time_us = now_us();
        let root = CommitRecord {
            seq: 1,
            parent: 0,
            merged: 0,
            time_us,
            oldest_us: time_us,
            changes: 0,
            bytes: 0,
            message: "history begins".to_owned(),
            author: String::new(),
        };
        let mut puts: Vec<(String, Vec<u8>)> = record::commit_puts(&root, &BTreeMap::new(), false)
            .into_iter()
            .filter_map(|(key, value)| value.map(|v| (key, v)))
            .collect();
        puts.extend([
            (record::meta_key(), record::encode_meta(record::LAYOUT_LAZY_MAIN)),
            (record::branch_key(MAIN), record::encode_ref(1)),
            (record::last_key(), record::encode_ref(1)),
        ]);
        puts
    }

    /// The engine's own snapshot: history's keys and the entries as stored.
    pub fn raw_snapshot(&self) -> Result<Arc<dyn KvSnapshot>, StoreError> {
        self.inner.snapshot()
    }

    /// Turn `batch` into history's layout on top of what `snap` (taken under the writer lock)
    /// shows: the batch to hand to the engine. A batch that changes no Zarr key makes no version.
    fn record(&self, snap: &dyn KvSnapshot, batch: WriteBatch) -> Result<WriteBatch, StoreError> {
        let tip = self.tip(snap)?;
        let head = matches!(tip.target, Target::Head);
        let mut recording = Recording::new(tip.next_seq(snap)?, self.inner.as_ref());
        let mut out = WriteBatch::default();
        let mut kept = BTreeMap::new();
        let mut keep = |key: String, value: Vec<u8>| {
            kept.insert(key, Some(value));
            Ok(())
        };
        for prefix in batch.erased_prefixes {
            // Prefixes that cover bookkeeping never reach here (`db/transaction.rs`).
            for key in tip.target.keys(snap, &prefix)? {
                if !key.starts_with(RESERVED_PREFIX) {
                    let old = tip.target.old(snap, &key, &mut keep)?;
                    recording.change(&key, old, None);
                }
            }
            if head {
                out.erased_prefixes.push(prefix);
            }
        }
        for (key, value) in batch.puts {
            if key.starts_with(RESERVED_PREFIX) {
                out.puts.insert(key, value);
                continue;
            }
            let old = tip.target.old(snap, &key, &mut keep)?;
            match value {
                Some(value) => {
                    check_key_len(self.inner.max_key_len(), &key)?;
                    let (entry, object) = recording.put(&key, old, value, head)?;
                    out.puts.extend(object.map(|(k, v)| (k, Some(v))));
                    if head {
                        out.puts.insert(key, Some(entry));
                    }
                }
                None => {
                    if old.is_some() || recording.changes.contains_key(&key) {
                        recording.change(&key, old, None);
                    }
                    if head {
                        out.puts.insert(key, None);
                    }
                }
            }
        }
        out.puts.extend(kept);
        if !recording.changes_nothing() {
            upgrade_into(snap, &mut out)?;
            out.puts.extend(recording.finish(&tip, batch.note));
        }
        Ok(out)
    }

    /// Commit `batch` as a new version, through `writer` (the engine's writer lock, held by the
    /// caller's transaction) or under the lock taken here.
    fn commit_on(&self, writer: Option<Box<dyn KvWriter>>, batch: WriteBatch, durable: bool) -> Result<(), StoreError> {
        let writer = match writer {
            Some(writer) => Some(writer),
            None => self.inner.clone().lock_writer()?,
        };
        let snap = self.inner.snapshot()?;
        let batch = self.record(snap.as_ref(), batch)?;
        drop(snap);
        match writer {
            Some(writer) => writer.commit(batch, durable),
            None => self.inner.commit(batch, durable),
        }
    }

    /// Commit bookkeeping built by `build` from the latest state (a tag, a deleted tag's
    /// marker), under the engine's writer lock; the caller holds the database's. No version is
    /// made.
    pub fn commit_refs(
        &self,
        durable: bool,
        build: &mut dyn FnMut(&dyn KvSnapshot) -> Result<WriteBatch, crate::Error>,
    ) -> Result<(), crate::Error> {
        let writer = self.inner.clone().lock_writer()?;
        let snap = self.inner.snapshot()?;
        let batch = build(snap.as_ref())?;
        drop(snap);
        match writer {
            Some(writer) => writer.commit(batch, durable)?,
            None => self.inner.commit(batch, durable)?,
        }
        Ok(())
    }
}

/// Reading history: the commits, refs and versions of a database that keeps it.
pub(crate) mod read {
    use super::*;
    use std::collections::BTreeSet;

    pub(crate) use super::graph::{between, changes_between};
    pub(crate) use super::record::{commit_key, damaged, parse_commit_key, ENTRY_LEN};

    /// The commit `main` points at.
    pub fn main(snap: &dyn KvSnapshot) -> Result<CommitRecord, StoreError> {
        Ok(Tip::read(snap)?.parent)
    }

    /// The number of the newest commit made (numbers are never given out twice).
    pub fn newest(snap: &dyn KvSnapshot) -> Result<Option<u64>, StoreError> {
        super::newest(snap)
    }

    /// Whether `key` is a value written once and never rewritten (`o/`), whose bytes are
    /// named by its key: two databases of one lineage holding it hold the same bytes.
    pub fn is_written_once(key: &str) -> bool {
        key.starts_with(&record::objects_prefix())
    }

    /// Whether `key` belongs to history (everything under `__zarrdb/h/`).
    pub fn is_history_key(key: &str) -> bool {
        key.starts_with(PREFIX)
    }

    /// The record of commit `seq`, if there is one.
    pub fn commit(snap: &dyn KvSnapshot, seq: u64) -> Result<Option<CommitRecord>, StoreError> {
        if seq == 0 {
            return Ok(None);
        }
        read_commit(snap, seq)
    }

    /// The commit of `parent`, which `child` names as its parent.
    pub fn parent_of(snap: &dyn KvSnapshot, child: &CommitRecord) -> Result<Option<CommitRecord>, StoreError> {
        if child.parent == 0 {
            return Ok(None);
        }
        // Parents are older than their children, so every walk up the history ends.
        if child.parent >= child.seq {
            return Err(record::damaged(&record::commit_key(child.seq), "a commit's parent is not older than it"));
        }
        let found = read_commit(snap, child.parent)?;
        let missing = || record::damaged(&record::commit_key(child.parent), "the parent of a commit is missing");
        found.map(Some).ok_or_else(missing)
    }

    /// The commit tag `name` points at; `Err(true)` when the name belonged to a deleted tag,
    /// `Err(false)` when it never was a tag.
    pub fn tag(snap: &dyn KvSnapshot, name: &str) -> Result<Result<u64, bool>, StoreError> {
        if let Some(seq) = read_ref(snap, &record::tag_key(name))? {
            return Ok(Ok(seq));
        }
        Ok(Err(snap.get(&record::retired_tag_key(name))?.is_some()))
    }

    /// Every tag, by name.
    pub fn tags(snap: &dyn KvSnapshot) -> Result<Vec<(String, u64)>, StoreError> {
        let prefix = record::tags_prefix();
        let mut tags = Vec::new();
        for key in snap.keys(&prefix)? {
            // sled's reads see the live tree: a tag deleted since the listing is skipped.
            if let Some(seq) = read_ref(snap, &key)? {
                tags.push((key[prefix.len()..].to_owned(), seq));
            }
        }
        Ok(tags)
    }

    /// The number of the newest commit made (numbers are never given out twice).
    pub fn last(snap: &dyn KvSnapshot) -> Result<u64, StoreError> {
        Ok(super::newest(snap)?.unwrap_or(0))
    }

    /// The expiry horizon ([`expire`]): 0 before the first expiry.
    pub fn horizon(snap: &dyn KvSnapshot) -> Result<u64, StoreError> {
        Ok(read_ref(snap, &record::horizon_key())?.unwrap_or(0))
    }

    /// Whether commit `seq` has expired, once an expiry set a horizon: no tag or branch
    /// reaches it (a branch other than `main` reaches its commits down to where it meets
    /// `main`'s ancestry, that one included), and it is older than the horizon or not on
    /// `main`'s ancestry at all (a commit a deleted or reset branch left: the commits before it
    /// may be collected). The head of `main` never expires.
    pub fn expired(snap: &dyn KvSnapshot, seq: u64) -> Result<bool, StoreError> {
        match Expiry::read(snap)? {
            Some(mut expiry) => expiry.expired(snap, seq),
            None => Ok(false),
        }
    }

    /// [`expired`] for many commits of one snapshot: `main`'s ancestry is read once, and what
    /// the refs keep once, when a commit first needs it.
    pub struct Expiry {
        horizon: u64,
        head: u64,
        chain: Vec<CommitRecord>,
        on_main: BTreeSet<u64>,
        kept: Option<BTreeSet<u64>>,
    }

    impl Expiry {
        /// `None` before the first expiry: no commit has expired.
        pub fn read(snap: &dyn KvSnapshot) -> Result<Option<Expiry>, StoreError> {
            let horizon = horizon(snap)?;
            if horizon == 0 {
                return Ok(None);
            }
            let chain = graph::main_chain(snap)?;
            let on_main = chain.iter().map(|c| c.seq).collect();
            Ok(Some(Expiry { horizon, head: chain[0].seq, chain, on_main, kept: None }))
        }

        pub fn expired(&mut self, snap: &dyn KvSnapshot, seq: u64) -> Result<bool, StoreError> {
            if seq == self.head || (seq >= self.horizon && self.on_main.contains(&seq)) {
                return Ok(false);
            }
            // What tags and branches keep is worked out once, at the first commit that needs it.
            if self.kept.is_none() {
                self.kept = Some(graph::protected(snap, &self.chain)?);
            }
            Ok(!self.kept.as_ref().is_some_and(|kept| kept.contains(&seq)))
        }
    }

    /// Expire every commit older than `seq` that no tag names: the batch that moves the horizon
    /// there, or `None` when it is there or further already (it never moves back).
    pub fn expire(snap: &dyn KvSnapshot, seq: u64) -> Result<Option<WriteBatch>, StoreError> {
        if horizon(snap)? >= seq {
            return Ok(None);
        }
        let mut batch = WriteBatch::default();
        batch.puts.insert(record::horizon_key(), Some(record::encode_ref(seq)));
        Ok(Some(batch))
    }

    /// The commit branch `name` points at.
    pub fn branch(snap: &dyn KvSnapshot, name: &str) -> Result<Option<u64>, StoreError> {
        read_ref(snap, &record::branch_key(name))
    }

    /// The entries of the version commit `at` made: the state of the oldest version kept, then
    /// the changes of every commit after it on `at`'s ancestry (a merge commit's list holds what
    /// it brought in, so first parents suffice).
    pub fn entries(snap: &dyn KvSnapshot, at: &CommitRecord) -> Result<Entries, StoreError> {
        let chain = ancestry_of(snap, at)?;
        let mut entries = base_entries(snap)?;
        // The oldest commit's state is the base; its own changes are not read.
        for seq in chain.iter().rev().skip(1).map(|c| c.seq) {
            for (changed, change) in changes_of(snap, seq)? {
                match change.new {
                    Some(entry) => entries.insert(changed, entry),
                    None => entries.remove(&changed),
                };
            }
        }
        Ok(entries)
    }

    /// How many commits past a version `main`'s head may be for the version to be read as the
    /// head plus the keys changed since.
    const BEHIND_LIMIT: usize = 4_096;

    /// The version made by commit `at`, read through `snap`. Where `snap` does not change
    /// (`stable`) and the version is on `main`'s first-parent line, at most `BEHIND_LIMIT` commits
    /// behind its head, it reads as `main`'s head
    /// but for the keys changed since ([`view::Behind`]): opening it costs what changed since,
    /// and its reads what the head's cost. Otherwise the entries of every key are folded from
    /// the oldest version kept.
    pub fn version(
        snap: Arc<dyn KvSnapshot>,
        at: &CommitRecord,
        stable: bool,
    ) -> Result<Arc<dyn KvSnapshot>, StoreError> {
        // A damaged ref of `main` leaves the fold, which does not read it; a version far behind
        // `main` (or off its line, found only by walking it) is folded too, so opening one never
        // walks more records than before.
        let head = if stable { main(snap.as_ref()).ok() } else { None };
        if let Some(head) = head {
            if let Some(changes) = super::graph::changes_within(snap.as_ref(), at, &head, BEHIND_LIMIT)? {
                let changed: BTreeMap<String, Option<Entry>> =
                    changes.into_iter().map(|(key, change)| (key, change.old)).collect();
                let entries = changed.iter().filter_map(|(key, entry)| entry.map(|e| (key.clone(), e))).collect();
                return Ok(Arc::new(view::Behind {
                    head: view::Head { inner: snap.clone() },
                    version: view::Version { inner: snap, entries: Arc::new(entries), seq: at.seq },
                    changed: Arc::new(changed),
                }));
            }
        }
        let entries = Arc::new(entries(snap.as_ref(), at)?);
        Ok(Arc::new(view::Version { inner: snap, entries, seq: at.seq }))
    }

    /// Every branch and the commit it points at, by name (`main` among them).
    pub fn branches(snap: &dyn KvSnapshot) -> Result<Vec<(String, u64)>, StoreError> {
        let prefix = record::branches_prefix();
        let mut branches = Vec::new();
        for key in snap.keys(&prefix)? {
            if let Some(seq) = read_ref(snap, &key)? {
                branches.push((key[prefix.len()..].to_owned(), seq));
            }
        }
        Ok(branches)
    }

    /// Check the history in `snap` whole: `main`'s ancestry (every record there, parents older
    /// than their children), every value any of its versions reads (under its object key, or
    /// inline at the head), the superseded entries each commit recorded against the history
    /// before it, the head's entries against the last version, and every tag's commit. The
    /// problems found, each with the key it is about; the walk stops at one that leaves
    /// nothing further to check. It reads the whole history.
    pub fn verify(snap: Arc<dyn KvSnapshot>) -> Result<Vec<(String, String)>, StoreError> {
        // A commit's changes are in its record or beside it: a problem is named where it is.
        fn damage_at(error: &StoreError, otherwise: &str) -> String {
            match error {
                StoreError::Damaged { key, .. } => key.clone(),
                _ => otherwise.to_owned(),
            }
        }
        let mut problems = Vec::new();
        let mut note = |key: &str, error: StoreError| problems.push((key.to_owned(), error.to_string()));
        let tip = match Tip::read(snap.as_ref()) {
            Ok(tip) => tip,
            Err(e) => {
                note(PREFIX, e);
                return Ok(problems);
            }
        };
        let mut chain = vec![tip.parent.seq];
        let mut commit = tip.parent.clone();
        loop {
            match parent_of(snap.as_ref(), &commit) {
                Ok(Some(parent)) => {
                    chain.push(parent.seq);
                    commit = parent;
                }
                Ok(None) => break,
                Err(e) => {
                    note(&record::commit_key(commit.seq), e);
                    return Ok(problems);
                }
            }
        }
        let on_main: BTreeSet<u64> = chain.iter().copied().collect();
        // The oldest commit's state is the base: its own changes are not read.
        chain.pop();
        let head = view::Head { inner: snap.clone() };
        // Reads each value by its entry alone, as every version does.
        let values = view::Version { inner: snap.clone(), entries: Arc::default(), seq: tip.parent.seq };
        let mut entries = match base_entries(snap.as_ref()) {
            Ok(entries) => entries,
            Err(e) => {
                note(&record::base_prefix(), e);
                return Ok(problems);
            }
        };
        // Every value some version on the ancestry reads, by its commit and index.
        let mut reached = std::collections::HashSet::new();
        for (key, entry) in &entries {
            if let Err(e) = values.read_entry(key, entry) {
                note(key, e);
            }
            reached.insert((entry.seq, entry.index));
        }
        let horizon_key = record::horizon_key();
        match read_ref(snap.as_ref(), &horizon_key) {
            Ok(Some(horizon)) if horizon > tip.last => {
                note(&horizon_key, record::damaged(&horizon_key, "the expiry horizon is past the newest commit"))
            }
            Ok(_) => {}
            Err(e) => note(&horizon_key, e),
        }
        for seq in chain.into_iter().rev() {
            let key = record::changes_key(seq);
            let changes = match changes_of(snap.as_ref(), seq) {
                Ok(changes) => changes,
                Err(e @ StoreError::Damaged { .. }) => {
                    note(&damage_at(&e, &key), e);
                    return Ok(problems);
                }
                Err(e) => return Err(e),
            };
            for (changed, change) in changes {
                if entries.get(&changed).copied() != change.old {
                    note(&changed, record::superseded_mismatch(&key));
                }
                match change.new {
                    Some(entry) => {
                        if let Err(e) = values.read_entry(&changed, &entry) {
                            note(&changed, e);
                        }
                        reached.insert((entry.seq, entry.index));
                        entries.insert(changed, entry);
                    }
                    None => {
                        entries.remove(&changed);
                    }
                }
            }
        }
        let live: Vec<String> =
            head.keys("")?.into_iter().filter(|k| !k.starts_with(crate::key::RESERVED_PREFIX)).collect();
        for key in &live {
            let mut found = None;
            snap.with_value(key, &mut |bytes| found = Some(Entry::decode_head(key, bytes).map(|(e, _)| e)))?;
            match found.transpose() {
                Ok(entry) if entry == entries.get(key).copied() => {}
                Ok(_) => note(key, record::damaged(key, "the head's entry is not the one its history made")),
                Err(e) => note(key, e),
            }
        }
        for key in entries.keys().filter(|k| live.binary_search(k).is_err()) {
            note(key, record::damaged(key, "a key the history holds is missing at the head"));
        }
        // Commits off `main` (on other branches, or left by a deleted or reset one): each
        // version reads the values its changes name, unless it expired (no ref reaches it, and
        // a horizon is set): a collection may have freed those.
        let checked = match read_ref(snap.as_ref(), &horizon_key)?.unwrap_or(0) {
            0 => None,
            _ => Some(graph::protected(snap.as_ref(), &graph::main_chain(snap.as_ref())?)?),
        };
        for key in snap.keys(&record::commits_prefix())? {
            let Some(seq) = record::parse_commit_key(&key) else {
                note(&key, record::damaged(&key, "a key among the commits that names none"));
                continue;
            };
            match read_commit(snap.as_ref(), seq) {
                Ok(Some(commit)) if commit.merged >= seq && commit.merged != 0 => {
                    note(&key, record::damaged(&key, "a merge commit merged a commit that is not older than it"))
                }
                Ok(_) => {}
                Err(e) => note(&key, e),
            }
            if on_main.contains(&seq) {
                continue;
            }
            match changes_of(snap.as_ref(), seq) {
                Ok(changes) => {
                    let live = checked.as_ref().is_none_or(|kept| kept.contains(&seq));
                    for (changed, entry) in changes.into_iter().filter_map(|(k, c)| c.new.map(|e| (k, e))) {
                        if let (Err(e), true) = (values.read_entry(&changed, &entry), live) {
                            note(&changed, e);
                        }
                        reached.insert((entry.seq, entry.index));
                    }
                }
                Err(e) => note(&damage_at(&e, &record::changes_key(seq)), e),
            }
        }
        // A list of changes no commit reads (its commit gone, or holding its changes itself)
        // is a leak too.
        for key in snap.keys(&record::changes_prefix())? {
            let Some(seq) = record::parse_changes_key(&key) else {
                note(&key, record::damaged(&key, "a key among the lists of changes that names no commit"));
                continue;
            };
            let at = record::commit_key(seq);
            let read = match snap.get(&at)? {
                Some(bytes) => CommitRecord::decode_with_changes(&at, &bytes).map(|(_, inline)| inline.is_none()),
                None => Ok(false),
            };
            match read {
                Ok(true) => {}
                Ok(false) => note(&key, record::damaged(&key, "a list of changes no commit reads is kept")),
                // Named at the record, above.
                Err(_) => {}
            }
        }
        // A value no version reads is a leak: a collection or a commit left it behind.
        for key in snap.keys(&record::objects_prefix())? {
            match record::parse_object_key(&key) {
                Some(named) if reached.contains(&named) => {}
                Some(_) => note(&key, record::damaged(&key, "a value no version reads is kept")),
                None => note(&key, record::damaged(&key, "a key among the values that names none")),
            }
        }
        let refs = tags(snap.as_ref())?.into_iter().map(|(name, seq)| (record::tag_key(&name), seq));
        for (key, seq) in refs.chain(branches(snap.as_ref())?.into_iter().map(|(n, seq)| (record::branch_key(&n), seq)))
        {
            match read_commit(snap.as_ref(), seq)? {
                // Every commit a ref names has its ancestry whole, down to the oldest kept.
                Some(commit) => {
                    if let Err(e) = ancestry_of(snap.as_ref(), &commit) {
                        note(&key, e);
                    }
                }
                None => note(&key, record::damaged(&key, "a tag or branch names a commit that is missing")),
            }
        }
        Ok(problems)
    }

    /// Tag `name` on commit `seq`: the puts, or `Err(true)`/`Err(false)` as [`tag`] says when
    /// the name is taken (by a tag, by a deleted one).
    pub fn new_tag(snap: &dyn KvSnapshot, name: &str, seq: u64) -> Result<Result<WriteBatch, bool>, StoreError> {
        match tag(snap, name)? {
            Ok(_) => return Ok(Err(false)),
            Err(true) => return Ok(Err(true)),
            Err(false) => {}
        }
        let mut batch = WriteBatch::default();
        batch.puts.insert(record::tag_key(name), Some(record::encode_ref(seq)));
        Ok(Ok(batch))
    }

    /// Delete tag `name`, leaving the marker that keeps its name from being used again; `None`
    /// when there is no such tag.
    pub fn delete_tag(snap: &dyn KvSnapshot, name: &str) -> Result<Option<WriteBatch>, StoreError> {
        let Some(seq) = read_ref(snap, &record::tag_key(name))? else { return Ok(None) };
        let mut batch = WriteBatch::default();
        batch.puts.insert(record::tag_key(name), None);
        batch.puts.insert(record::retired_tag_key(name), Some(record::encode_ref(seq)));
        Ok(Some(batch))
    }
}

/// The engine's writer, held by a transaction: its commit makes the version.
struct HistoryWriter {
    engine: Arc<HistoryEngine>,
    inner: Box<dyn KvWriter>,
}

impl KvWriter for HistoryWriter {
    fn commit(self: Box<Self>, batch: WriteBatch, durable: bool) -> Result<(), StoreError> {
        let HistoryWriter { engine, inner } = *self;
        engine.commit_on(Some(inner), batch, durable)
    }
}

/// A bulk write (an import) in history's layout: values and entries go into the engine's
/// transaction window by window; the list of changes and the commit record at the end, put
/// before the last window of values.
///
/// Why before: the commit's bookkeeping keys sort before every Zarr key, so putting them last
/// makes redb copy the path to the tree's first leaf into fresh pages at the end of the file
/// after the values, and the compaction that trims a grown file at close then takes more rounds,
/// each reading the whole tree and syncing (docs/benchmarks.md, "A bulk write's bookkeeping
/// before its last window"). Put before the last window, the last pages written are the values',
/// as without history.
struct HistoryBulk {
    inner: Box<dyn KvBulk>,
    /// The engine's longest key, where it has a limit.
    max_key_len: Option<usize>,
    snap: Arc<dyn KvSnapshot>,
    tip: Tip,
    recording: Recording,
    note: CommitNote,
    /// The last window put, not yet handed to the engine: put by the next window, an erase, or
    /// the commit (after the bookkeeping). Puts and erases reach the engine in the order given.
    held: Vec<(String, Vec<u8>)>,
}

impl HistoryBulk {
    /// Delete the values this write made and replaced itself.
    fn erase_dropped(&mut self) -> Result<(), StoreError> {
        if self.recording.dropped.is_empty() {
            return Ok(());
        }
        // The values erased may be in the window held back.
        self.put_held()?;
        for entry in std::mem::take(&mut self.recording.dropped) {
            self.inner.erase(&record::object_key(&entry))?;
        }
        Ok(())
    }

    /// Hand the window held back to the engine.
    fn put_held(&mut self) -> Result<(), StoreError> {
        let held = std::mem::take(&mut self.held);
        match held.is_empty() {
            true => Ok(()),
            false => self.inner.put(held),
        }
    }
}

impl KvBulk for HistoryBulk {
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), StoreError> {
        let mut out = Vec::with_capacity(values.len() * 2);
        for (key, value) in values {
            if key.starts_with(RESERVED_PREFIX) {
                out.push((key, value));
                continue;
            }
            check_key_len(self.max_key_len, &key)?;
            let old = self.tip.target.old(self.snap.as_ref(), &key, &mut |k, v| {
                out.push((k, v));
                Ok(())
            })?;
            let head = matches!(self.tip.target, Target::Head);
            let (entry, object) = self.recording.put(&key, old, value, head)?;
            out.extend(object);
            if head {
                out.push((key, entry));
            }
        }
        self.put_held()?;
        self.held = out;
        self.erase_dropped()
    }

    fn erase(&mut self, key: &str) -> Result<(), StoreError> {
        self.put_held()?;
        if key.starts_with(RESERVED_PREFIX) {
            return self.inner.erase(key);
        }
        let mut kept = Vec::new();
        let old = self.tip.target.old(self.snap.as_ref(), key, &mut |k, v| {
            kept.push((k, v));
            Ok(())
        })?;
        if old.is_some() || self.recording.changes.contains_key(key) {
            self.recording.change(key, old, None);
        }
        if !kept.is_empty() {
            self.inner.put(kept)?;
        }
        if matches!(self.tip.target, Target::Head) {
            self.inner.erase(key)?;
        }
        self.erase_dropped()
    }

    fn commit(self: Box<Self>, durable: bool) -> Result<(), StoreError> {
        let HistoryBulk { mut inner, snap, tip, mut recording, note, held, .. } = *self;
        if !recording.changes_nothing() {
            let mut puts: Vec<(String, Vec<u8>)> = upgrade(snap.as_ref())?.into_iter().collect();
            // A new commit's bookkeeping removes nothing.
            puts.extend(recording.finish(&tip, note).into_iter().filter_map(|(k, v)| v.map(|v| (k, v))));
            inner.put(puts)?;
        }
        // No key of the window is one of the bookkeeping's: those are history's own, which a
        // window holds only as values this commit moved to their object keys.
        if !held.is_empty() {
            inner.put(held)?;
        }
        drop(snap);
        inner.commit(durable)
    }
}

impl KvEngine for HistoryEngine {
    fn snapshot(&self) -> Result<Arc<dyn KvSnapshot>, StoreError> {
        let inner = self.inner.snapshot()?;
        if let Line::Main = self.line {
            return Ok(Arc::new(view::Head { inner }));
        }
        let tip = {
            let _folding = (!self.inner.stable_snapshots()).then(|| self.folds.read());
            self.tip(inner.as_ref())?
        };
        Ok(match tip.target {
            Target::Branch { state, .. } => Arc::new(view::Version { inner, entries: state, seq: tip.parent.seq }),
            Target::Head => Arc::new(view::Head { inner }),
        })
    }

    fn commit(&self, batch: WriteBatch, durable: bool) -> Result<(), StoreError> {
        self.commit_on(None, batch, durable)
    }

    fn commit_syncs(&self, durable: bool) -> bool {
        self.inner.commit_syncs(durable)
    }

    fn commit_gathers(&self, durable: bool) -> bool {
        self.inner.commit_gathers(durable)
    }

    fn stable_snapshots(&self) -> bool {
        self.inner.stable_snapshots()
    }

    fn shared_between_processes(&self) -> bool {
        self.inner.shared_between_processes()
    }

    fn max_key_len(&self) -> Option<usize> {
        self.inner.max_key_len()
    }

    fn commits_race(&self) -> bool {
        self.inner.commits_race()
    }

    fn inline_max(&self) -> Option<usize> {
        self.inner.inline_max()
    }

    fn lock_writer(self: Arc<Self>) -> Result<Option<Box<dyn KvWriter>>, StoreError> {
        let inner = self.inner.clone().lock_writer()?;
        Ok(inner.map(|inner| Box::new(HistoryWriter { engine: self, inner }) as Box<dyn KvWriter>))
    }

    fn bulk(self: Arc<Self>, expected_bytes: u64) -> Result<Box<dyn KvBulk>, StoreError> {
        let inner = self.inner.clone().bulk(expected_bytes)?;
        // The bulk write excludes other writers: this snapshot is the latest state.
        let snap = self.inner.snapshot()?;
        let tip = self.tip(snap.as_ref())?;
        let recording = Recording::new(tip.next_seq(snap.as_ref())?, self.inner.as_ref());
        let max_key_len = self.inner.max_key_len();
        Ok(Box::new(HistoryBulk {
            inner,
            max_key_len,
            snap,
            tip,
            recording,
            note: CommitNote::default(),
            held: Vec::new(),
        }))
    }

    fn compact(&self, database: &str, older_than: std::time::Duration) -> Result<(), CompactError> {
        self.inner.compact(database, older_than)
    }
}
