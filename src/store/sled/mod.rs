//! The sled engine: a folder holding a log-structured tree.
//!
//! Zarr keys are the keys of sled's default tree. A commit is one atomic `apply_batch`, followed
//! by `flush` (fsync) in durable mode; in fast mode by a flush at most every 500 ms. sled has no
//! long-lived snapshots: reads see the live tree, so a long read can see later commits (each
//! commit still appears whole to every single read).

mod copy;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::kv::{engine_error, refuse_if_read_only, slice_range, KvEngine, KvSnapshot, WriteBatch};
use super::ByteRange;
use crate::error::{OpenError, StoreError};

const NAME: &str = "sled";

/// In fast mode the log is flushed when the last flush is older than this. sled's own flusher
/// thread is off: it holds the database open for a while after the last handle is dropped, so
/// reopening at once would find it locked.
const FAST_FLUSH_INTERVAL: Duration = Duration::from_millis(500);

/// How long opening waits for a lock that a just-closed handle of this process may still hold.
const RELOCK_WAIT: Duration = Duration::from_secs(2);

/// How long closing a database whose writes failed waits for sled (see `Drop`).
const FAILED_CLOSE_WAIT: Duration = Duration::from_secs(5);

pub(crate) struct SledEngine {
    /// `None` once closed (`Drop`).
    db: Option<sled::Db>,
    last_flush: Mutex<Instant>,
    /// Commits are refused (sled itself has no read-only mode, so its files may still change).
    read_only: bool,
    /// A write of sled's log failed (a full disk). sled then waits for ever in its next flush,
    /// so later commits are refused and closing waits a bounded time.
    failed: AtomicBool,
    /// A read-only handle's private copy of the folder (`copy.rs`), removed after sled closed.
    copy: Option<copy::Copy>,
}

impl SledEngine {
    pub fn open(path: &Path, read_only: bool) -> Result<SledEngine, OpenError> {
        if !read_only {
            return SledEngine::open_folder(path, path, false, None);
        }
        // sled's open writes to its folder: a read-only handle opens a copy (`copy.rs`); errors
        // name the original.
        let copy = copy::Copy::of(path)?;
        let at = copy.path.clone();
        SledEngine::open_folder(&at, path, true, Some(copy))
    }

    /// Open the sled folder `at`; errors name `shown`.
    fn open_folder(
        at: &Path,
        shown: &Path,
        read_only: bool,
        copy: Option<copy::Copy>,
    ) -> Result<SledEngine, OpenError> {
        // sled's background threads hold the database, and its file lock, for a moment after the
        // last handle is dropped; a reopen right after a close waits that moment out.
        let deadline = Instant::now() + RELOCK_WAIT;
        let mut cleared = false;
        loop {
            match sled::Config::new().path(at).flush_every_ms(None).open().map_err(|e| open_error(shown, e)) {
                Ok(db) => {
                    return Ok(SledEngine {
                        db: Some(db),
                        last_flush: Mutex::new(Instant::now()),
                        read_only,
                        failed: AtomicBool::new(false),
                        copy,
                    })
                }
                Err(OpenError::Locked { .. }) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                // Only after sled refused the folder (so no live process holds it, or the error
                // would be `Locked`), and once.
                Err(OpenError::Corrupted { .. }) if !cleared && remove_empty_snapshot_drafts(at) => cleared = true,
                Err(e) => return Err(e),
            }
        }
    }
}

/// Remove the empty `snap.<lsn>.generating` files a crash can leave: sled writes a snapshot
/// under that name and renames it when complete, so such a file is an unfinished draft, not part
/// of the database, yet sled refuses to open a folder holding an empty one. Returns whether any
/// was removed.
fn remove_empty_snapshot_drafts(path: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(path) else { return false };
    let mut removed = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let draft = name.to_str().is_some_and(|n| n.starts_with("snap.") && n.ends_with(".generating"));
        if draft && entry.metadata().is_ok_and(|m| m.is_file() && m.len() == 0) {
            removed |= std::fs::remove_file(entry.path()).is_ok();
        }
    }
    removed
}

impl SledEngine {
    fn db(&self) -> &sled::Db {
        self.db.as_ref().expect("the database is open until dropped")
    }

    /// Pass `result` on, noting a failed write.
    fn noting<T>(&self, result: Result<T, StoreError>) -> Result<T, StoreError> {
        if result.is_err() {
            self.failed.store(true, Ordering::Release);
        }
        result
    }
}

impl Drop for SledEngine {
    fn drop(&mut self) {
        let Some(db) = self.db.take() else { return };
        if !self.failed.load(Ordering::Acquire) {
            // Fast-mode commits since the last flush; an error here has no caller to go to. A
            // read-only handle committed nothing.
            if !self.read_only {
                let _ = db.flush();
            }
            // Closed before its copy goes (read-only handles).
            drop(db);
            drop(self.copy.take());
            return;
        }
        // After a failed write (a full disk), sled's flush, which its own close runs too, waits
        // on a condition that never comes. Closed on a thread of its own and waited for a bounded
        // time: past it, the thread (and with it sled's lock on the folder, until the process
        // ends) is left behind rather than the caller hung.
        let (done, closed) = mpsc::channel();
        let closer = std::thread::Builder::new().name("zarrdb-sled-close".into()).spawn(move || {
            let _ = db.flush();
            drop(db);
            let _ = done.send(());
        });
        if closer.is_ok() {
            let _ = closed.recv_timeout(FAILED_CLOSE_WAIT);
        }
    }
}

impl KvEngine for SledEngine {
    fn snapshot(&self) -> Result<Arc<dyn KvSnapshot>, StoreError> {
        Ok(Arc::new(SledView { tree: (**self.db()).clone() }))
    }

    fn commit(&self, batch: WriteBatch, durable: bool) -> Result<(), StoreError> {
        refuse_if_read_only(self.read_only, "commit")?;
        if self.failed.load(Ordering::Acquire) {
            let source = "an earlier write of sled's log failed (a full disk?); sled cannot write again until the \
                          database is closed and opened again";
            return Err(StoreError::Engine {
                backend: NAME,
                operation: "commit",
                key: String::new(),
                source: source.into(),
            });
        }
        let db = self.db();
        let mut ops = sled::Batch::default();
        for prefix in &batch.erased_prefixes {
            for key in db.scan_prefix(prefix.as_bytes()).keys() {
                let key = key.map_err(engine_error(NAME, "erase_prefix", prefix))?;
                // A put of the same batch, applied after, wins (sled keeps the last op per key).
                ops.remove(key);
            }
        }
        for (key, value) in batch.puts {
            match value {
                Some(v) => ops.insert(key.as_bytes(), v),
                None => ops.remove(key.as_bytes()),
            }
        }
        self.noting(db.apply_batch(ops).map_err(engine_error(NAME, "commit", "")))?;
        let mut last_flush = self.last_flush.lock();
        if durable || last_flush.elapsed() >= FAST_FLUSH_INTERVAL {
            self.noting(db.flush().map_err(engine_error(NAME, "flush", "")))?;
            *last_flush = Instant::now();
        }
        Ok(())
    }

    fn stable_snapshots(&self) -> bool {
        false
    }
}

/// Reads of the live tree (sled has no snapshots).
struct SledView {
    tree: sled::Tree,
}

impl SledView {
    fn value(&self, key: &str) -> Result<Option<sled::IVec>, StoreError> {
        self.tree.get(key.as_bytes()).map_err(engine_error(NAME, "get", key))
    }
}

fn utf8_key(key: sled::IVec) -> Result<String, StoreError> {
    String::from_utf8(key.to_vec()).map_err(|e| StoreError::Engine {
        backend: NAME,
        operation: "list",
        key: String::from_utf8_lossy(e.as_bytes()).into_owned(),
        source: Box::new(e.utf8_error()),
    })
}

impl KvSnapshot for SledView {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.value(key)?.map(|v| v.to_vec()))
    }

    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        self.value(key)?.map(|v| slice_range(key, &v, range)).transpose()
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        Ok(self.value(key)?.map(|v| v.len() as u64))
    }

    fn next_key(&self, from: &str, within: &str) -> Result<Option<String>, StoreError> {
        match self.tree.range(from.as_bytes()..).keys().next() {
            Some(key) => {
                let key = utf8_key(key.map_err(engine_error(NAME, "list", from))?)?;
                Ok(key.starts_with(within).then_some(key))
            }
            None => Ok(None),
        }
    }

    fn keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        self.tree
            .scan_prefix(prefix.as_bytes())
            .keys()
            .map(|k| utf8_key(k.map_err(engine_error(NAME, "list", prefix))?))
            .collect()
    }
}

fn open_error(path: &Path, error: sled::Error) -> OpenError {
    let path = path.display().to_string();
    match error {
        // sled reports a held file lock as an `Other` I/O error with this text.
        sled::Error::Io(source) if source.to_string().starts_with("could not acquire lock") => {
            OpenError::Locked { path, backend: NAME }
        }
        sled::Error::Io(source) => OpenError::Io { path, source },
        e @ (sled::Error::Corruption { .. } | sled::Error::Unsupported(_)) => {
            OpenError::Corrupted { path, backend: NAME, source: Box::new(e) }
        }
        e => OpenError::Engine { path, backend: NAME, source: Box::new(e) },
    }
}
