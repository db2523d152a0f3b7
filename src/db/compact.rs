//! Compaction: giving the space of erased and overwritten data back to the file system.

use std::path::Path;
use std::time::Duration;

use super::transaction::WriterGuard;
use super::Database;
use crate::error::{CompactError, Error};

/// How often a compaction that finds a read in progress tries again before it reports
/// [`CompactError::InUse`]: the reads of a region write or a listing end within milliseconds;
/// a snapshot the program holds does not.
const BUSY_ATTEMPTS: u32 = 20;
const BUSY_PAUSE: Duration = Duration::from_millis(25);

/// How old garbage on a bucket database must be before [`Database::compact`] deletes it: long
/// enough for any reader that pinned a superseded commit to finish reading it.
const BUCKET_GARBAGE_AGE: Duration = Duration::from_secs(3600);

/// What a compaction did: the database's size on disk before and after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Compaction {
    /// The length of the database's file(s) before, in bytes.
    pub bytes_before: u64,
    /// The length right after the compaction, while the database is still open. Closing it may
    /// add the engine's bookkeeping to the file (redb writes its allocator state at a close), so
    /// the length after the close can be larger: measure the file then for that figure (as
    /// `zarrdb compact` does).
    pub bytes_after: u64,
}

impl Database {
    /// Move the live data to the front of the file and cut the file after it, so the file is
    /// about the size of what it holds: erased arrays and overwritten chunks leave free pages
    /// behind, which the engine reuses but never gives back by itself.
    ///
    /// It waits for this process's open write transaction to end and holds off new ones while
    /// it runs (readers of other threads wait too). Each step is a commit of its own, so a crash
    /// leaves the database as it was, or compacted in part, with all its data. Another process
    /// writing meanwhile (redb in multi-writer mode) waits for it.
    ///
    /// - redb: redb's own compaction, in place. It cannot move pages a reader may still see, so
    ///   while a [`crate::Snapshot`] is open the latest commit is copied into a new file beside
    ///   the old one, synced and renamed over it (a crash leaves the old file or the new one);
    ///   the snapshots go on reading the old file until they end. In multi-writer mode other
    ///   processes may hold the old file, so there an open snapshot (of any process) makes it
    ///   fail with [`CompactError::InUse`] instead.
    /// - LMDB: a compacting copy of the latest commit (`mdb_env_copy2`), synced and renamed over
    ///   `data.mdb`, then the environment is opened again on it (a crash leaves the old file or
    ///   the new one). It needs the environment to itself: an open snapshot or transaction of
    ///   this process, or another process with the database open, makes it fail with
    ///   [`CompactError::InUse`], nothing changed.
    /// - sled: [`CompactError::Unsupported`] (docs/format.md, "Space").
    ///
    /// ```
    /// use zarrdb::{Array, ArrayMetadata, DataType, Database, Node};
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::create(dir.path().join("c.zarrdb"))?;
    /// let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::Float64, vec![65536], vec![8192]))?;
    /// a.write_region(&[0], &[65536], &vec![1.5f64; 65536])?;
    /// Node::erase(db.store(), "/a")?;
    /// let done = db.compact()?;
    /// assert!(done.bytes_after < done.bytes_before);
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    ///
    /// On a bucket database it deletes the objects no commit reaches that are more than an hour
    /// old by the server's clock, and keeps a commit superseded less than an hour ago whole, for
    /// readers that still hold it ([`Database::compact_older_than`] takes another age).
    pub fn compact(&self) -> Result<Compaction, Error> {
        self.compact_older_than(BUCKET_GARBAGE_AGE)
    }

    /// [`Database::compact`], where on a bucket database garbage goes once it is `age` old
    /// (zero: all of it), and a commit superseded more than `age` ago is no longer kept for its
    /// readers: a [`crate::Snapshot`] of such a commit may then fail to read. Commits in flight
    /// lose nothing whatever the age: the collection first moves the head (a commit of its own
    /// over the same data), so a commit based on an older head is tried again and uploads its
    /// values again rather than name objects the collection may delete (docs/architecture.md,
    /// "Bucket databases"). On a file the age changes nothing.
    ///
    /// ```
    /// use std::time::Duration;
    /// use zarrdb::{Database, Store};
    /// let db = Database::builder().history(true).create("zarrdb+memory://compact-doc")?;
    /// db.store().set("a", &[1; 10_000])?;
    /// db.store().set("a", &[2; 10_000])?;
    /// db.expire(&zarrdb::db::VersionRef::Branch("main".into()))?;
    /// db.collect()?;
    /// db.compact_older_than(Duration::ZERO)?;
    /// assert_eq!(db.store().get("a")?, Some(vec![2; 10_000]));
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn compact_older_than(&self, age: Duration) -> Result<Compaction, Error> {
        let database = self.shared.path.display().to_string();
        if self.shared.read_only {
            return Err(CompactError::ReadOnly { database }.into());
        }
        let _writer = WriterGuard::acquire(self.shared.clone())?;
        let bytes_before = disk_length(&self.shared.path);
        let mut attempt = 1;
        loop {
            match self.shared.engine.compact(&database, age) {
                Err(CompactError::InUse { .. }) if attempt < BUSY_ATTEMPTS => {
                    attempt += 1;
                    std::thread::sleep(BUSY_PAUSE);
                }
                Err(e) => return Err(e.into()),
                Ok(()) => break,
            }
        }
        Ok(Compaction { bytes_before, bytes_after: disk_length(&self.shared.path) })
    }
}

/// The length of the file at `path`, or the sum over the files of the folder (LMDB, sled).
fn disk_length(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return 0 };
    if !meta.is_dir() {
        return meta.len();
    }
    let entries = std::fs::read_dir(path).into_iter().flatten().flatten();
    entries.filter_map(|e| e.metadata().ok()).filter(|m| m.is_file()).map(|m| m.len()).sum()
}
