//! The history of a database, for those that keep one ([`crate::DatabaseBuilder::history`]): its
//! commits, tags, and the versions they name, read like snapshots.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{Database, DbShared, Snapshot, Transaction};
use crate::error::{Error, HistoryError};
use crate::store::history::merge::{self, Merged};
use crate::store::history::{read, Collected, Commit, HistoryEngine, MAIN, STEP_CHANGES};
use crate::store::kv::{CommitNote, KvSnapshot, WriteBatch};

/// A commit of a database that keeps history: its number in the database, counted from 1 (the
/// empty version history begins with), written as 16 hexadecimal digits.
///
/// ```
/// use zarrdb::db::CommitId;
/// let id: CommitId = "000000000000002a".parse()?;
/// assert_eq!(id.sequence(), 42);
/// assert_eq!(id.to_string(), "000000000000002a");
/// assert!("2a".parse::<CommitId>().is_err());
/// # Ok::<(), zarrdb::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CommitId(u64);

impl CommitId {
    /// The commit's number: later commits have larger ones.
    pub fn sequence(&self) -> u64 {
        self.0
    }
}

impl std::fmt::Display for CommitId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl std::str::FromStr for CommitId {
    type Err = Error;

    fn from_str(text: &str) -> Result<CommitId, Error> {
        let digits = text.len() == 16 && text.bytes().all(|b| b.is_ascii_hexdigit());
        match digits.then(|| u64::from_str_radix(text, 16).ok()).flatten() {
            Some(seq) => Ok(CommitId(seq)),
            None => Err(HistoryError::InvalidCommitId { given: shown(text) }.into()),
        }
    }
}

/// A commit as [`Database::log`] shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommitInfo {
    /// The commit.
    pub id: CommitId,
    /// The commit it was made on; `None` for the first.
    pub parent: Option<CommitId>,
    /// For a merge commit ([`Database::merge`]), the commit it merged into its parent.
    pub merged: Option<CommitId>,
    /// When it was made (each commit's time is later than its parent's).
    pub time: SystemTime,
    /// Its message ([`Transaction::commit_with`]); empty when none was given.
    pub message: String,
    /// Its author, as given; empty when none was.
    pub author: String,
    /// How many keys it wrote or removed.
    pub changes: u64,
    /// The bytes of the values it wrote.
    pub bytes: u64,
}

impl CommitInfo {
    fn of(record: &Commit) -> CommitInfo {
        CommitInfo {
            id: CommitId(record.seq),
            parent: (record.parent != 0).then_some(CommitId(record.parent)),
            merged: (record.merged != 0).then_some(CommitId(record.merged)),
            time: UNIX_EPOCH + Duration::from_micros(record.time_us),
            message: record.message.clone(),
            author: record.author.clone(),
            changes: record.changes,
            bytes: record.bytes,
        }
    }
}

/// A version of a database that keeps history.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VersionRef {
    /// The commit a tag names.
    Tag(String),
    /// The commit a branch points at now (`main`, or another: [`Database::create_branch`]).
    Branch(String),
    /// The tag of this name or, when no tag ever had it, the branch (tags and branches share
    /// one set of names): what a name given as text means.
    Name(String),
    /// A commit.
    Commit(CommitId),
    /// The newest commit on `main` made at or before a time.
    AsOf(SystemTime),
}

impl VersionRef {
    /// A version as text names it (the command line's `DB@VERSION`, Python's `version=`): 16
    /// hexadecimal digits are a commit, `main` is the branch, anything else is a tag or a
    /// branch ([`VersionRef::Name`]).
    ///
    /// ```
    /// use zarrdb::db::VersionRef;
    /// assert_eq!(VersionRef::named("main"), VersionRef::Branch("main".into()));
    /// assert_eq!(VersionRef::named("paper-2026"), VersionRef::Name("paper-2026".into()));
    /// assert!(matches!(VersionRef::named("000000000000002a"), VersionRef::Commit(id) if id.sequence() == 42));
    /// ```
    pub fn named(text: &str) -> VersionRef {
        match text.parse::<CommitId>() {
            Ok(id) => VersionRef::Commit(id),
            Err(_) if text == MAIN => VersionRef::Branch(text.to_owned()),
            Err(_) => VersionRef::Name(text.to_owned()),
        }
    }
}

impl std::fmt::Display for VersionRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VersionRef::Tag(name) => write!(f, "tag \"{}\"", shown(name)),
            VersionRef::Branch(name) => write!(f, "branch \"{}\"", shown(name)),
            VersionRef::Name(name) => write!(f, "tag or branch \"{}\"", shown(name)),
            VersionRef::Commit(id) => write!(f, "commit {id}"),
            VersionRef::AsOf(time) => {
                let us = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros());
                write!(f, "commit made at or before {us} µs after the Unix epoch")
            }
        }
    }
}

/// `text` escaped and capped, for a one-line message.
fn shown(text: &str) -> String {
    text.chars().take(80).collect::<String>().escape_debug().to_string()
}

/// Refuse a name no tag or branch may have.
fn check_name(name: &str) -> Result<(), Error> {
    let reason = if name.is_empty() {
        Some("it is empty")
    } else if name.len() > 200 {
        Some("it is longer than 200 bytes")
    } else if name.chars().any(char::is_control) {
        Some("it holds a control character")
    } else if name.contains('@') {
        Some("it holds '@', which separates a database from a version in locators")
    } else if name.parse::<CommitId>().is_ok() {
        Some("it reads as a commit id")
    } else if name == MAIN {
        Some("it is the name of the main branch")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(HistoryError::InvalidName { name: shown(name), reason }.into()),
        None => Ok(()),
    }
}

impl DbShared {
    /// Refuse `name` for a new tag or branch when a branch, a tag or a deleted tag has it.
    fn check_free(&self, snap: &dyn KvSnapshot, name: &str) -> Result<(), Error> {
        let what = match (read::branch(snap, name)?, read::tag(snap, name)?) {
            (Some(_), _) => "branch",
            (None, Ok(_)) => "tag",
            (None, Err(true)) => "deleted tag",
            (None, Err(false)) => return Ok(()),
        };
        Err(HistoryError::NameTaken { database: self.path.display().to_string(), name: shown(name), what }.into())
    }

    pub(super) fn history(&self) -> Result<&Arc<HistoryEngine>, Error> {
        let database = || self.path.display().to_string();
        self.history.as_ref().ok_or_else(|| HistoryError::Off { database: database() }.into())
    }

    fn not_found(&self, at: &VersionRef) -> Error {
        HistoryError::NotFound { database: self.path.display().to_string(), reference: at.to_string() }.into()
    }

    fn expired(&self, at: &VersionRef) -> Error {
        HistoryError::Expired { database: self.path.display().to_string(), reference: at.to_string() }.into()
    }

    /// The commit `at` names, read through `snap`; an expired one is refused.
    fn resolve(&self, snap: &dyn KvSnapshot, at: &VersionRef) -> Result<Commit, Error> {
        // A tag keeps its commit from expiring, and a branch's head never is.
        let seq = match at {
            VersionRef::Tag(name) => match read::tag(snap, name)? {
                Ok(seq) => seq,
                Err(true) => {
                    let database = self.path.display().to_string();
                    return Err(HistoryError::TagDeleted { database, name: shown(name) }.into());
                }
                Err(false) => return Err(self.not_found(at)),
            },
            VersionRef::Branch(name) => read::branch(snap, name)?.ok_or_else(|| self.not_found(at))?,
            VersionRef::Name(name) => match read::tag(snap, name)? {
                Ok(seq) => seq,
                Err(true) => {
                    let database = self.path.display().to_string();
                    return Err(HistoryError::TagDeleted { database, name: shown(name) }.into());
                }
                Err(false) => read::branch(snap, name)?.ok_or_else(|| self.not_found(at))?,
            },
            VersionRef::Commit(id) => {
                return match read::commit(snap, id.0)? {
                    Some(commit) if read::expired(snap, commit.seq)? => Err(self.expired(at)),
                    Some(commit) => Ok(commit),
                    // Commit numbers are never reused: a number given out before, once a horizon
                    // is set, was collected (under the horizon, or off `main` with no ref to it).
                    None if id.0 > 0 && read::horizon(snap)? > 0 && id.0 <= read::last(snap)? => Err(self.expired(at)),
                    None => Err(self.not_found(at)),
                };
            }
            VersionRef::AsOf(time) => {
                let limit =
                    time.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
                let mut commit = read::main(snap)?;
                while commit.time_us > limit {
                    // The commit that was newest then was folded into this one by a collection.
                    if commit.oldest_us <= limit {
                        return Err(self.expired(at));
                    }
                    commit = read::parent_of(snap, &commit)?.ok_or_else(|| self.not_found(at))?;
                }
                return match read::expired(snap, commit.seq)? {
                    true => Err(self.expired(at)),
                    false => Ok(commit),
                };
            }
        };
        read::commit(snap, seq)?.ok_or_else(|| self.not_found(at))
    }
}

/// History's records as one snapshot shows them, with the writer lock held where the engine's
/// reads see the live file (sled), so no commit or collection changes them during the walk;
/// drop both together.
type HistoryView = (Option<super::transaction::WriterGuard>, Arc<dyn KvSnapshot>);

impl Database {
    pub(super) fn history_view(&self) -> Result<HistoryView, Error> {
        let history = self.shared.history()?;
        // A thread that holds the writer lock already keeps collections out.
        let writer = match self.stable_snapshots() || self.shared.would_deadlock().is_err() {
            true => None,
            false => Some(super::transaction::WriterGuard::acquire(self.shared.clone())?),
        };
        Ok((writer, history.raw_snapshot()?))
    }

    /// Write history's records (refs, the horizon, a merge commit): `build` makes the batch from
    /// the latest state, with this handle's writer lock and the engine's held, and says what to
    /// return once it is committed.
    ///
    /// On a bucket database another writer may move the head first: the batch is then built
    /// again from the new latest state and committed over it (`race.rs`).
    pub(super) fn write_history<T>(
        &self,
        mut build: impl FnMut(&dyn KvSnapshot) -> Result<(WriteBatch, T), Error>,
    ) -> Result<T, Error> {
        let history = self.shared.history()?;
        let _writer = super::transaction::WriterGuard::acquire(self.shared.clone())?;
        let mut built = None;
        let mut commit = || {
            history.commit_refs(self.shared.durable, &mut |snap| {
                let (batch, out) = build(snap)?;
                built = Some(out);
                Ok(batch)
            })
        };
        let mut committed = commit();
        let mut retry = super::race::Retry::new();
        while super::race::lost(&committed) && retry.again() {
            committed = commit();
        }
        committed?;
        Ok(built.expect("set when the batch is built"))
    }

    /// Whether the database keeps history ([`crate::DatabaseBuilder::history`]).
    pub fn keeps_history(&self) -> bool {
        self.shared.history.is_some()
    }

    /// The commits of `main` (or of this handle's branch), newest first, back to the oldest
    /// kept (the first, the empty version history began with, until an expiry). Commits that
    /// have expired ([`Database::expire`]) are left out at once, before a collection removes
    /// them, so every commit listed opens ([`Database::open_version`]); a commit's `parent` may
    /// name one left out. [`HistoryError::Off`] for a database without history.
    ///
    /// ```
    /// use zarrdb::Database;
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::builder().history(true).create(dir.path().join("log.zarrdb"))?;
    /// let txn = db.begin_write()?;
    /// txn.store().set("notes/zarr.json", br#"{"zarr_format":3,"node_type":"group"}"#)?;
    /// txn.commit_with("add notes", "ada")?;
    /// let log = db.log()?;
    /// assert_eq!((log[0].message.as_str(), log[0].author.as_str()), ("add notes", "ada"));
    /// assert_eq!(log[0].parent, Some(log[1].id));
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn log(&self) -> Result<Vec<CommitInfo>, Error> {
        let (_writer, snap) = self.history_view()?;
        let branch = VersionRef::Branch(self.shared.history()?.branch().to_owned());
        let mut commit = self.shared.resolve(snap.as_ref(), &branch)?;
        let mut log = vec![CommitInfo::of(&commit)];
        // An expired commit a collection has not removed yet cannot be opened: it is left out.
        let mut expiry = read::Expiry::read(snap.as_ref())?;
        while let Some(parent) = read::parent_of(snap.as_ref(), &commit)? {
            if !expiry.as_mut().map(|e| e.expired(snap.as_ref(), parent.seq)).transpose()?.unwrap_or(false) {
                log.push(CommitInfo::of(&parent));
            }
            commit = parent;
        }
        Ok(log)
    }

    /// The commit `at` names now.
    pub fn resolve(&self, at: &VersionRef) -> Result<CommitInfo, Error> {
        let (_writer, snap) = self.history_view()?;
        Ok(CommitInfo::of(&self.shared.resolve(snap.as_ref(), at)?))
    }

    /// Name the commit `at` names with tag `name`, for good: a tag never moves, and once deleted
    /// its name is never given to another commit. Creating a tag writes one small record,
    /// whatever the size of the database.
    pub fn tag(&self, name: &str, at: &VersionRef) -> Result<CommitId, Error> {
        check_name(name)?;
        self.write_history(|snap| {
            let commit = self.shared.resolve(snap, at)?;
            if read::branch(snap, name)?.is_some() {
                self.shared.check_free(snap, name)?;
            }
            let database = || self.shared.path.display().to_string();
            match read::new_tag(snap, name, commit.seq)? {
                Ok(batch) => Ok((batch, CommitId(commit.seq))),
                Err(true) => Err(HistoryError::TagDeleted { database: database(), name: shown(name) }.into()),
                Err(false) => Err(HistoryError::TagExists { database: database(), name: shown(name) }.into()),
            }
        })
    }

    /// Delete tag `name`. The version it named stays readable by its commit id; the name is
    /// never used again.
    pub fn delete_tag(&self, name: &str) -> Result<(), Error> {
        self.write_history(|snap| {
            let batch = read::delete_tag(snap, name)?;
            Ok((batch.ok_or_else(|| self.shared.not_found(&VersionRef::Tag(name.to_owned())))?, ()))
        })
    }

    /// Every tag and the commit it names, by name.
    pub fn tags(&self) -> Result<Vec<(String, CommitId)>, Error> {
        // Tags are single records, listed skipping any deleted meanwhile: no lock needed.
        let snap = self.shared.history()?.raw_snapshot()?;
        Ok(read::tags(snap.as_ref())?.into_iter().map(|(name, seq)| (name, CommitId(seq))).collect())
    }

    /// A read-only view of the version `at` names, as a [`Snapshot`]: every read API takes its
    /// store, and it does not change while writers commit (from this process or others).
    pub fn open_version(&self, at: &VersionRef) -> Result<Snapshot, Error> {
        let (_writer, snap) = self.history_view()?;
        let commit = self.shared.resolve(snap.as_ref(), at)?;
        let version = read::version(snap, &commit, self.stable_snapshots())?;
        Ok(Snapshot::of_version(&self.shared, version))
    }
}

/// What [`Database::collect`] freed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Collection {
    /// Expired versions whose records were removed.
    pub versions: u64,
    /// Values deleted: those only expired versions read.
    pub values: u64,
    /// Their bytes ([`Database::compact`] gives the space back to the file system).
    pub bytes: u64,
}

impl Database {
    /// Expire every version older than the one `keep` names that no tag names: they are
    /// refused from then on ([`HistoryError::Expired`]), and [`Database::collect`] frees what
    /// only they read. `keep` and every later version stay, and so does every tagged one (until
    /// its tag is deleted). `VersionRef::AsOf(t)` keeps the version that was current at `t`;
    /// the head of `main` keeps only the head and the tagged versions (and a time before the
    /// first commit, or one whose version has expired already, expires nothing more). The horizon
    /// never moves back: returns where it is (`None` while no horizon was ever set). Expiring
    /// writes one small record.
    ///
    /// ```
    /// use zarrdb::db::VersionRef;
    /// use zarrdb::Database;
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::builder().history(true).create(dir.path().join("e.zarrdb"))?;
    /// for round in 0..3u8 {
    ///     db.store().set("notes/c/0", &[round; 8192])?;
    /// }
    /// let log = db.log()?;
    /// db.tag("first", &VersionRef::Commit(log[2].id))?;
    /// db.expire(&VersionRef::Branch("main".into()))?;
    /// assert!(db.open_version(&VersionRef::Commit(log[1].id)).is_err()); // expired
    /// let freed = db.collect()?;
    /// assert_eq!((freed.values, freed.bytes), (1, 8192)); // only the expired version read it
    /// assert_eq!(db.open_version(&VersionRef::Tag("first".into()))?.store().get("notes/c/0")?, Some(vec![0; 8192]));
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn expire(&self, keep: &VersionRef) -> Result<Option<CommitId>, Error> {
        let horizon = self.write_history(|snap| {
            let horizon = read::horizon(snap)?;
            let seq = match (self.shared.resolve(snap, keep), keep) {
                (Ok(commit), _) => commit.seq,
                // Nothing is that old, or what was current then is gone already.
                (
                    Err(Error::History(HistoryError::NotFound { .. } | HistoryError::Expired { .. })),
                    VersionRef::AsOf(_),
                ) => return Ok((WriteBatch::default(), horizon)),
                (Err(e), _) => return Err(e),
            };
            Ok((read::expire(snap, seq)?.unwrap_or_default(), horizon.max(seq)))
        })?;
        Ok((horizon > 0).then_some(CommitId(horizon)))
    }

    /// Free what only expired versions read ([`Database::expire`]): their records go, and
    /// every value no kept version reads is deleted, exactly those. Its time follows what it
    /// frees and what the expired commits recorded, not the size of the database. It works in
    /// steps of bounded size, each one commit that writers from this and other processes
    /// interleave with, and readers of kept versions read on through it; after a crash the
    /// next collection carries on where it stopped.
    pub fn collect(&self) -> Result<Collection, Error> {
        let history = self.shared.history()?;
        let mut total = Collected::default();
        loop {
            let _writer = super::transaction::WriterGuard::acquire(self.shared.clone())?;
            match history.collect_step(self.shared.durable, STEP_CHANGES)? {
                Some(step) => total.add(step),
                None => break,
            }
        }
        Ok(Collection { versions: total.commits, values: total.values, bytes: total.bytes })
    }
}

/// A key that differs between two versions ([`Database::diff`]), with its value's length in each
/// (`None`: absent there).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeyChange {
    /// The Zarr key (a node's `zarr.json`, or a chunk key).
    pub key: String,
    /// Its value's length in the first version.
    pub before: Option<u64>,
    /// Its value's length in the second version.
    pub after: Option<u64>,
}

/// Damage [`Database::check_history`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HistoryProblem {
    /// The key it is about (a Zarr key, or one of history's own under `__zarrdb/h/`).
    pub key: String,
    /// What is wrong.
    pub what: String,
}

impl Database {
    /// Check the history whole (`zarrdb check` runs it): the commits of `main` back to the
    /// first (their records, and parents older than their children), every value any version
    /// reads, what each commit recorded as superseded against the commits before it, the
    /// head's entries against the newest version, and every tag's commit. It reads the whole
    /// history; an empty list means nothing is wrong.
    pub fn check_history(&self) -> Result<Vec<HistoryProblem>, Error> {
        let (_writer, snap) = self.history_view()?;
        Ok(read::verify(snap)?.into_iter().map(|(key, what)| HistoryProblem { key, what }).collect())
    }

    /// The keys that differ between the versions `from` and `to`, any two (on one branch or on
    /// two), in key order, with their values' lengths on each side: added (`before` is `None`),
    /// removed (`after` is `None`) and written again. It reads the changes the commits of each
    /// side recorded since the two parted, so its cost follows what changed, not the size of the
    /// database; a key written again with the same bytes counts as changed.
    ///
    /// ```
    /// use zarrdb::db::VersionRef;
    /// use zarrdb::{Array, ArrayMetadata, DataType, Database};
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::builder().history(true).create(dir.path().join("d.zarrdb"))?;
    /// let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![4], vec![2]))?;
    /// a.write_region(&[0], &[4], &[1u8, 2, 3, 4])?;
    /// let before = db.tag("before", &VersionRef::Branch("main".into()))?;
    /// a.write_region(&[2], &[2], &[0u8, 0])?;
    /// let changed = db.diff(&VersionRef::Commit(before), &VersionRef::Branch("main".into()))?;
    /// assert_eq!(changed.iter().map(|c| c.key.as_str()).collect::<Vec<_>>(), ["a/c/1"]);
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn diff(&self, from: &VersionRef, to: &VersionRef) -> Result<Vec<KeyChange>, Error> {
        let (_writer, snap) = self.history_view()?;
        let (a, b) = (self.shared.resolve(snap.as_ref(), from)?, self.shared.resolve(snap.as_ref(), to)?);
        Ok(read::between(snap.as_ref(), &a, &b)?
            .into_iter()
            .map(|(key, change)| KeyChange { key, before: change.old.map(|e| e.len), after: change.new.map(|e| e.len) })
            .collect())
    }

    /// Make the node at `node` (`"/"` for the whole hierarchy) hold again exactly what it held in
    /// the version `at` names, as one new commit: its keys of then are written back and its keys
    /// made since are removed; nodes elsewhere are untouched and history is never rewritten (the
    /// bad version stays readable). Returns the commit the database is at afterwards (the one
    /// before when nothing differed). It reads the node's values at both ends.
    ///
    /// ```
    /// use zarrdb::db::VersionRef;
    /// use zarrdb::{Array, ArrayMetadata, DataType, Database};
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::builder().history(true).create(dir.path().join("r.zarrdb"))?;
    /// let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![2], vec![1]))?;
    /// a.write_region(&[0], &[2], &[1u8, 2])?;
    /// let good = db.resolve(&VersionRef::Branch("main".into()))?.id;
    /// a.write_region(&[0], &[2], &[0u8, 0])?; // a bad overwrite
    /// db.restore("/a", &VersionRef::Commit(good))?;
    /// assert_eq!(a.read_all::<u8>()?, vec![1, 2]);
    /// assert_eq!(db.log()?[0].message, "restore /a to commit ".to_owned() + &good.to_string());
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn restore(&self, node: &str, at: &VersionRef) -> Result<CommitInfo, Error> {
        let node = crate::key::path::NodePath::parse(node)?;
        let prefix = node.key_prefix();
        let version = self.open_version(at)?.store();
        let txn = self.begin_write()?;
        let store = txn.store();
        let then = version.list_prefix(&prefix)?;
        let kept: std::collections::BTreeSet<&str> = then.iter().map(String::as_str).collect();
        for key in store.list_prefix(&prefix)? {
            if !kept.contains(key.as_str()) {
                store.erase(&key)?;
            }
        }
        for key in &then {
            let value = version.get(key)?.ok_or_else(|| self.shared.not_found(at))?;
            if store.get(key)?.as_deref() != Some(&value[..]) {
                store.set(key, &value)?;
            }
        }
        // A name says which it is: the tag, or the branch.
        let named = match at {
            VersionRef::Name(name) if self.tags()?.iter().any(|(tag, _)| tag == name) => VersionRef::Tag(name.clone()),
            VersionRef::Name(name) => VersionRef::Branch(name.clone()),
            other => other.clone(),
        };
        txn.commit_with(&format!("restore {} to {named}", node.as_str()), "")?;
        self.resolve(&VersionRef::Branch(self.shared.history()?.branch().to_owned()))
    }
}

/// What [`Database::merge`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MergeOutcome {
    /// The branch held the version already: nothing was written.
    UpToDate(CommitId),
    /// The version descended from the branch's head, and now is its head: no commit was made.
    FastForward(CommitId),
    /// A merge commit joined the two: its first parent is the branch's old head, and it records
    /// the merged version's commit.
    Merged(CommitId),
}

impl MergeOutcome {
    /// The commit the branch points at afterwards.
    pub fn head(&self) -> CommitId {
        match self {
            MergeOutcome::UpToDate(id) | MergeOutcome::FastForward(id) | MergeOutcome::Merged(id) => *id,
        }
    }
}

impl Database {
    /// The branch this handle commits to and reads the head of: `main`, unless it came from
    /// [`Database::on_branch`]. `None` for a database without history.
    pub fn branch(&self) -> Option<&str> {
        self.shared.history.as_ref().map(|history| history.branch())
    }

    /// Make branch `name` at the version `at` names. Commits to it ([`Database::on_branch`])
    /// are kept in history alone; `main` and other branches do not see them until a merge.
    /// Tags and branches share names: one held by either (or by a deleted tag) is refused
    /// ([`HistoryError::NameTaken`]). Writes one small record, whatever the size of the database.
    ///
    /// ```
    /// use zarrdb::db::VersionRef;
    /// use zarrdb::Database;
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::builder().history(true).create(dir.path().join("b.zarrdb"))?;
    /// db.store().set("notes/c/0", b"main's")?;
    /// db.create_branch("trial", &VersionRef::Branch("main".into()))?;
    /// let trial = db.on_branch("trial")?;
    /// trial.store().set("notes/c/0", b"trial's")?;
    /// assert_eq!(db.store().get("notes/c/0")?, Some(b"main's".to_vec()));
    /// assert_eq!(trial.store().get("notes/c/0")?, Some(b"trial's".to_vec()));
    /// db.merge(&VersionRef::Branch("trial".into()), "main", "take the trial")?; // a fast-forward
    /// assert_eq!(db.store().get("notes/c/0")?, Some(b"trial's".to_vec()));
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn create_branch(&self, name: &str, at: &VersionRef) -> Result<CommitId, Error> {
        check_name(name)?;
        self.write_history(|snap| {
            let commit = self.shared.resolve(snap, at)?;
            self.shared.check_free(snap, name)?;
            Ok((merge::create(snap, name, commit.seq)?.unwrap_or_default(), CommitId(commit.seq)))
        })
    }

    /// Delete branch `name` (not `main`). Its commits stay readable by id (and by any tag or
    /// branch that reaches them) until an expiry passes them.
    pub fn delete_branch(&self, name: &str) -> Result<(), Error> {
        if name == MAIN {
            let reason = "the main branch holds the database's head and cannot be deleted";
            return Err(HistoryError::InvalidName { name: MAIN.to_owned(), reason }.into());
        }
        self.write_history(|snap| {
            let batch = merge::delete(snap, name)?;
            Ok((batch.ok_or_else(|| self.shared.not_found(&VersionRef::Branch(name.to_owned())))?, ()))
        })
    }

    /// Every branch (`main` among them) and the commit it points at, by name.
    pub fn branches(&self) -> Result<Vec<(String, CommitId)>, Error> {
        let snap = self.shared.history()?.raw_snapshot()?;
        Ok(read::branches(snap.as_ref())?.into_iter().map(|(name, seq)| (name, CommitId(seq))).collect())
    }

    /// This database as branch `name` sees it: a handle whose stores, transactions and
    /// snapshots read the branch's head and commit to the branch (with the same transactions,
    /// conflict rules and group commit as `main`; writers of the branch and of `main`, from this
    /// and other processes, take turns). Its [`Database::log`] is the branch's.
    pub fn on_branch(&self, name: &str) -> Result<Database, Error> {
        let history = self.shared.history()?;
        if read::branch(history.raw_snapshot()?.as_ref(), name)?.is_none() {
            return Err(self.shared.not_found(&VersionRef::Branch(name.to_owned())));
        }
        Ok(Database { shared: Arc::new(self.shared.on_history(Arc::new(history.on_branch(name)))) })
    }

    /// Merge the version `from` names into branch `into`: nothing to do when the branch holds
    /// it already; a fast-forward when it descends from the branch's head; otherwise a merge
    /// commit with `message`, bringing in what `from` changed since the two parted, as long as
    /// no key changed on both sides to different values (chunk by chunk, document by document)
    /// and no node was made, removed or restructured on one side (an array's `zarr.json`
    /// changed other than in its attributes) while keys under it changed on the other. When
    /// either happened, nothing is written and [`HistoryError::MergeConflict`] names the keys.
    /// A merge writes no value: its entries name the values the merged commits wrote.
    ///
    /// ```
    /// use zarrdb::db::{MergeOutcome, VersionRef};
    /// use zarrdb::Database;
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::builder().history(true).create(dir.path().join("m.zarrdb"))?;
    /// db.create_branch("dev", &VersionRef::Branch("main".into()))?;
    /// db.on_branch("dev")?.store().set("a/c/0", b"dev")?;
    /// db.store().set("a/c/1", b"main")?;
    /// let merged = db.merge(&VersionRef::Branch("dev".into()), "main", "merge dev")?;
    /// assert!(matches!(merged, MergeOutcome::Merged(_)));
    /// assert_eq!(db.store().get("a/c/0")?, Some(b"dev".to_vec()));
    /// db.on_branch("dev")?.store().set("a/c/1", b"dev too")?;
    /// assert!(db.merge(&VersionRef::Branch("dev".into()), "main", "again").is_err()); // a/c/1 conflicts
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn merge(&self, from: &VersionRef, into: &str, message: &str) -> Result<MergeOutcome, Error> {
        self.merge_with(from, into, message, true)
    }

    /// [`Database::merge`], always making a merge commit where the branch could fast-forward
    /// (git's `--no-ff`): the branch gains one commit whose changes are everything `from` holds
    /// beyond the branch's head, and its log (which follows first parents) shows that one
    /// commit, not the commits that made `from`. How many processes wrote through a staging
    /// branch, then land as one version (docs/python.md, "Writing from a dask cluster").
    ///
    /// ```
    /// use zarrdb::db::{MergeOutcome, VersionRef};
    /// use zarrdb::Database;
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::builder().history(true).create(dir.path().join("m.zarrdb"))?;
    /// db.create_branch("stage", &VersionRef::Branch("main".into()))?;
    /// let stage = db.on_branch("stage")?;
    /// for i in 0..3 {
    ///     stage.store().set(&format!("a/c/{i}"), b"staged")?;
    /// }
    /// let before = db.log()?.len();
    /// let merged = db.merge_commit(&VersionRef::Branch("stage".into()), "main", "three writes")?;
    /// assert!(matches!(merged, MergeOutcome::Merged(_)));
    /// assert_eq!(db.log()?.len(), before + 1);
    /// assert_eq!(db.store().get("a/c/2")?, Some(b"staged".to_vec()));
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn merge_commit(&self, from: &VersionRef, into: &str, message: &str) -> Result<MergeOutcome, Error> {
        self.merge_with(from, into, message, false)
    }

    fn merge_with(
        &self,
        from: &VersionRef,
        into: &str,
        message: &str,
        fast_forward: bool,
    ) -> Result<MergeOutcome, Error> {
        let outcome = self.write_history(|snap| {
            let source = self.shared.resolve(snap, from)?;
            let note = CommitNote { message: message.to_owned(), author: String::new() };
            let into_ref = || VersionRef::Branch(into.to_owned());
            match merge::merge(snap, into, &source, note, fast_forward)?
                .ok_or_else(|| self.shared.not_found(&into_ref()))?
            {
                Ok(written) => Ok(written),
                Err(keys) => Err(HistoryError::MergeConflict {
                    database: self.shared.path.display().to_string(),
                    into: shown(into),
                    source_ref: from.to_string(),
                    count: keys.len(),
                    keys: keys.into_iter().take(100).collect(),
                }
                .into()),
            }
        })?;
        self.shared.versions.bump_all();
        Ok(match outcome {
            Merged::UpToDate(seq) => MergeOutcome::UpToDate(CommitId(seq)),
            Merged::FastForward(seq) => MergeOutcome::FastForward(CommitId(seq)),
            Merged::Commit(seq) => MergeOutcome::Merged(CommitId(seq)),
        })
    }

    /// Point branch `name` at the version `to` names, whatever the two share (`main`'s Zarr
    /// keys are rewritten to hold that version). The commits the branch leaves stay readable
    /// by id until an expiry passes them; history is not rewritten. Returns the branch's new
    /// head.
    pub fn reset(&self, name: &str, to: &VersionRef) -> Result<CommitId, Error> {
        let head = self.write_history(|snap| {
            let target = self.shared.resolve(snap, to)?;
            let batch = merge::reset(snap, name, &target)?;
            Ok((
                batch.ok_or_else(|| self.shared.not_found(&VersionRef::Branch(name.to_owned())))?,
                CommitId(target.seq),
            ))
        })?;
        self.shared.versions.bump_all();
        Ok(head)
    }
}

impl Transaction {
    /// [`Transaction::commit`], recording `message` and `author` with the commit in a database
    /// that keeps history (see [`Database::log`]). A database without history commits the same
    /// and keeps neither.
    pub fn commit_with(self, message: &str, author: &str) -> Result<(), Error> {
        self.commit_noted(CommitNote { message: message.to_owned(), author: author.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_cannot_be_tags() {
        for bad in ["", "a@b", "0123456789abcdef", "tab\there", &"x".repeat(201)] {
            assert!(matches!(check_name(bad), Err(Error::History(HistoryError::InvalidName { .. }))), "{bad:?}");
        }
        assert!(check_name("main").is_err(), "the branch's name");
        for good in ["v1", "2026-11-29", "paper/figure 3", "0123456789abcde"] {
            check_name(good).unwrap();
        }
    }
}
