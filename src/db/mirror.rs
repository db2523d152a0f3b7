//! Mirroring a database's history into another database (push and pull, as with a git remote):
//! the target ends up holding every version, tag and branch of the source, and only what it
//! lacks is written to it (docs/architecture.md, "Push and pull").
//!
//! A mirror works on the keys as the engines store them: the Zarr keys (each an entry naming its
//! value, and the value when inline) and history's records under `__zarrdb/h/`; each engine's own
//! bookkeeping (the format record, commit-log positions, LMDB's checksum flag) stays as the
//! target has it. Both databases keep history, so the target reads what it is given.
//!
//! Which keys differ is found without reading values whose identity is known: a value under
//! history's `o/` keys is written once and named by its key, so a key both hold holds the same
//! bytes; a Zarr key starts with an entry naming its value by the commit that wrote it, so equal
//! entries mean equal values. That holds only between databases of one lineage, which
//! [`check_lineage`] makes sure of before anything is written: the target is blank, or its newest
//! commit is the source's commit of that number. Everything else is compared byte for byte.
//!
//! The changes are one commit of the target's engine (atomic: a reader of the target sees the
//! old history or the new one); on a bucket database whose head another writer moves first, it
//! is planned again over the new head (`race.rs`, through [`Database::write_history`]).

use std::cmp::Ordering;

use super::Database;
use crate::error::{Error, HistoryError, StoreError};
use crate::key::RESERVED_PREFIX;
use crate::store::history::read;
use crate::store::kv::{KvSnapshot, WriteBatch};
use crate::store::ByteRange;

/// What [`Database::mirror_into`] wrote to its target.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Mirrored {
    /// Commits the target did not hold.
    pub commits: u64,
    /// Keys written (new or changed), history's records and refs included.
    pub keys_written: u64,
    /// Bytes of the values written.
    pub bytes_written: u64,
    /// Keys removed: those the source no longer holds (collected, deleted tags and branches,
    /// keys deleted by later commits).
    pub keys_removed: u64,
}

impl Database {
    /// Make `target` hold this database's history: every version, tag and branch, and the
    /// same head, writing only what it lacks (push, or pull when this database is the remote).
    /// Both keep history ([`HistoryError::Off`] otherwise). The target is blank (created with
    /// history on and never written), or was a mirror of this database that has not gone its
    /// own way since: its newest commit must be this database's commit of that number, else
    /// [`HistoryError::Diverged`] and nothing is written. Tags and branches that only the target
    /// holds are removed, as `git push --mirror` does; commits are never lost that way, since a
    /// branch made on the target alone has a commit of its own, which the check refuses.
    ///
    /// The changed values are held in memory until the target commits them in one commit.
    ///
    /// ```
    /// use zarrdb::db::VersionRef;
    /// use zarrdb::{Array, ArrayMetadata, DataType, Database};
    /// let dir = tempfile::tempdir().unwrap();
    /// let local = Database::builder().history(true).create(dir.path().join("local.zarrdb"))?;
    /// let a = Array::create(local.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![2], vec![2]))?;
    /// a.write_region(&[0], &[2], &[1u8, 2])?;
    /// local.tag("v1", &VersionRef::Branch("main".into()))?;
    ///
    /// let remote = Database::builder().history(true).create(dir.path().join("remote.zarrdb"))?;
    /// local.mirror_into(&remote)?;
    /// a.write_region(&[0], &[2], &[3u8, 4])?;
    /// let second = local.mirror_into(&remote)?;
    /// assert_eq!(second.commits, 1);
    ///
    /// let v1 = remote.open_version(&VersionRef::Tag("v1".into()))?;
    /// assert_eq!(Array::open(v1.store(), "/a")?.read_all::<u8>()?, vec![1, 2]);
    /// assert_eq!(Array::open(remote.store(), "/a")?.read_all::<u8>()?, vec![3, 4]);
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn mirror_into(&self, target: &Database) -> Result<Mirrored, Error> {
        self.shared.history()?;
        target.shared.history()?;
        if self.path() == target.path() {
            return Err(HistoryError::MirrorIntoItself { database: self.path().display().to_string() }.into());
        }
        // The source's writer lock is held where its snapshots see the live file (sled), so no
        // collection rewrites records under the walk.
        let (_source_writer, source) = self.history_view()?;
        let names = (self.path().display().to_string(), target.path().display().to_string());
        let mirrored = target.write_history(|target_snap| {
            check_lineage(source.as_ref(), target_snap, &names)?;
            let (batch, mirrored) = plan(source.as_ref(), target_snap)?;
            Ok((batch, mirrored))
        })?;
        // Every chunk of the target may have changed under its read-modify-writes.
        target.shared.versions.bump_all();
        Ok(mirrored)
    }
}

/// Refuse a target that holds a commit the source does not: one made on the target since the
/// last mirror (numbers are never given out twice in one database, so the newest commit is the
/// one such a commit would be), or one the source has collected since, which this cannot tell
/// apart from the first.
fn check_lineage(source: &dyn KvSnapshot, target: &dyn KvSnapshot, names: &(String, String)) -> Result<(), Error> {
    let Some(newest) = read::newest(target)? else { return Ok(()) };
    // A blank database holds the first commit alone (the empty version history begins with).
    if newest <= 1 {
        return Ok(());
    }
    let diverged = |why| {
        Error::from(HistoryError::Diverged { database: names.0.clone(), target: names.1.clone(), commit: newest, why })
    };
    let missing = || read::damaged(&read::commit_key(newest), "the newest commit of history has no record");
    let theirs = read::commit(target, newest)?.ok_or_else(missing)?;
    let Some(ours) = read::commit(source, newest)? else { return Err(diverged("does not hold")) };
    // A collection may rewrite a record's parent and counts (folding expired commits into it);
    // what the commit was made with stays.
    let made = |c: &crate::store::history::Commit| (c.seq, c.time_us, c.message.clone(), c.author.clone());
    match made(&ours) == made(&theirs) {
        true => Ok(()),
        false => Err(diverged("holds another commit under that number")),
    }
}

/// Whether a mirror carries `key`: the Zarr keys and history's, not the engines' own.
fn mirrored(key: &str) -> bool {
    !key.starts_with(RESERVED_PREFIX) || read::is_history_key(key)
}

/// The keys a mirror carries, in order.
fn carried(snap: &dyn KvSnapshot) -> Result<Vec<String>, StoreError> {
    let mut keys: Vec<String> = snap.keys("")?.into_iter().filter(|key| mirrored(key)).collect();
    keys.sort_unstable();
    keys.dedup();
    Ok(keys)
}

/// The target's batch: the source's keys it lacks or holds otherwise, and the removal of those
/// the source does not hold.
fn plan(source: &dyn KvSnapshot, target: &dyn KvSnapshot) -> Result<(WriteBatch, Mirrored), Error> {
    let (ours, theirs) = (carried(source)?, carried(target)?);
    let mut batch = WriteBatch::default();
    let mut mirrored = Mirrored::default();
    let (mut i, mut j) = (0, 0);
    while i < ours.len() || j < theirs.len() {
        let order = match (ours.get(i), theirs.get(j)) {
            (Some(a), Some(b)) => a.cmp(b),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match order {
            Ordering::Greater => {
                batch.puts.insert(theirs[j].clone(), None);
                mirrored.keys_removed += 1;
                j += 1;
            }
            Ordering::Equal if same(source, target, &ours[i])? => (i, j) = (i + 1, j + 1),
            _ => {
                let key = &ours[i];
                // A key listed a moment ago is there: the snapshot is fixed (or, on sled, no
                // collection runs while the source's writer lock is held).
                let value =
                    source.get(key)?.ok_or_else(|| read::damaged(key, "a key listed by a snapshot has no value"))?;
                mirrored.keys_written += 1;
                mirrored.bytes_written += value.len() as u64;
                if read::parse_commit_key(key).is_some() {
                    mirrored.commits += 1;
                }
                batch.puts.insert(key.clone(), Some(value));
                if order == Ordering::Equal {
                    j += 1;
                }
                i += 1;
            }
        }
    }
    Ok((batch, mirrored))
}

/// Whether both hold the same value at `key` (of one lineage, see the module's comment).
fn same(source: &dyn KvSnapshot, target: &dyn KvSnapshot, key: &str) -> Result<bool, StoreError> {
    let size = source.size(key)?;
    if size != target.size(key)? {
        return Ok(false);
    }
    if read::is_written_once(key) {
        return Ok(true);
    }
    if !key.starts_with(RESERVED_PREFIX) && size.is_some_and(|s| s >= read::ENTRY_LEN as u64) {
        let entry = ByteRange::FromStart { offset: 0, length: Some(read::ENTRY_LEN as u64) };
        return Ok(source.get_range(key, entry)? == target.get_range(key, entry)?);
    }
    Ok(source.get(key)? == target.get(key)?)
}
