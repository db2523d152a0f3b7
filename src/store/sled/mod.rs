//! The sled engine: a folder holding a log-structured tree.
//!
//! Zarr keys are the keys of sled's default tree. A commit is one atomic `apply_batch`, followed
//! by `flush` (fsync), in fast mode too: see [`SledEngine::commit`]. sled has no long-lived
//! snapshots: reads see the live tree, so a long read can see later commits (each commit still
//! appears whole to every single read).

mod anchor;
mod copy;
mod pieces;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::kv::{engine_error, refuse_if_read_only, KvEngine, KvSnapshot, WriteBatch};
use super::ByteRange;
use crate::error::{OpenError, StoreError};

const NAME: &str = "sled";

/// How long opening waits for a lock that a just-closed handle of this process may still hold.
const RELOCK_WAIT: Duration = Duration::from_secs(2);

/// How long closing a database whose writes failed waits for sled (see `Drop`).
const FAILED_CLOSE_WAIT: Duration = Duration::from_secs(5);

/// A flush still waiting after this long, on a file system with less than [`FULL_BYTES`] free,
/// is taken for one that a full disk stopped (see [`SledEngine::flush`]).
const FULL_WAIT: Duration = Duration::from_secs(1);
const FULL_BYTES: u64 = 1 << 20;

pub(crate) struct SledEngine {
    /// `None` once closed (`Drop`).
    db: Option<sled::Db>,
    /// Commits are refused (sled itself has no read-only mode, so its files may still change).
    read_only: bool,
    /// A write of sled's log failed (a full disk). sled then waits for ever in its next flush,
    /// so later commits are refused and closing waits a bounded time.
    failed: AtomicBool,
    /// A read-only handle's private copy of the folder (`copy.rs`), removed after sled closed.
    copy: Option<copy::Copy>,
    /// The folder sled works in.
    folder: PathBuf,
    /// The commits the database holds (`anchor.rs`); held through each commit, which keeps
    /// commits in order.
    commits: Mutex<u64>,
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
            // sled's recovery may panic on a damaged log ("tried to serialize Uninitialized"
            // after a page of zeros): that is a damaged database too.
            let opened = super::panic::catch(|| sled::Config::new().path(at).flush_every_ms(None).open()).map_err(
                |message| OpenError::Corrupted {
                    path: shown.display().to_string(),
                    backend: NAME,
                    source: format!("sled panicked while recovering its log: {message}").into(),
                },
            )?;
            match opened.map_err(|e| open_error(shown, e)) {
                Ok(db) => {
                    let commits = check_commits(&db, at, shown)?;
                    return Ok(SledEngine {
                        commits: Mutex::new(commits),
                        db: Some(db),
                        read_only,
                        failed: AtomicBool::new(false),
                        copy,
                        folder: at.to_path_buf(),
                    });
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

/// The commits `db` holds, checked against the count last recorded beside it (`anchor.rs`):
/// fewer means sled's recovery stopped at damage in its log and left later durable commits out.
fn check_commits(db: &sled::Db, at: &Path, shown: &Path) -> Result<u64, OpenError> {
    let damaged =
        |what: String| OpenError::Corrupted { path: shown.display().to_string(), backend: NAME, source: what.into() };
    let held = match db.get(anchor::COUNT_KEY).map_err(|e| open_error(shown, e))? {
        Some(value) => anchor::parse_count(&value).ok_or_else(|| damaged("its commit count is damaged".into()))?,
        None => 0,
    };
    match anchor::read(at).map_err(|what| damaged(what.into()))? {
        Some(recorded) if recorded > held => Err(damaged(format!(
            "its log holds {held} commits but {recorded} had reached the disk: sled's recovery stopped at damage in \
             its log and left the later commits out"
        ))),
        _ => Ok(held),
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

    /// Records that `commits` commits reached the disk (`anchor.rs`). A failure only leaves the
    /// record behind, which can never make a sound database look damaged.
    fn record(&self, commits: u64) {
        let _ = anchor::write(&self.folder, commits);
    }

    /// sled's flush, bounded. When a write of sled's log fails in one of its I/O threads (a full
    /// disk), the flush that waits for that write waits for ever: sled never marks the buffer
    /// stable. So the flush runs on a thread of its own, and the caller watches the folder's file
    /// system meanwhile: a flush still waiting after [`FULL_WAIT`] with less than [`FULL_BYTES`]
    /// free is reported as a full disk (`ENOSPC`), and its thread is left behind.
    fn flush(&self) -> Result<(), StoreError> {
        let db = self.db().clone();
        let (done, flushed) = mpsc::channel();
        let flusher = std::thread::Builder::new().name("zarrdb-sled-flush".into()).spawn(move || {
            let flushed = db.flush();
            // Before answering: a close that follows must find no handle of sled left open here.
            drop(db);
            let _ = done.send(flushed);
        });
        if flusher.is_err() {
            // No thread to spare: flush here, unbounded, as sled itself would.
            return self.db().flush().map(drop).map_err(engine_error(NAME, "flush", ""));
        }
        let start = Instant::now();
        loop {
            match flushed.recv_timeout(Duration::from_millis(100)) {
                Ok(result) => return result.map(drop).map_err(engine_error(NAME, "flush", "")),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let source = std::io::Error::other("sled's flush thread ended without an answer");
                    return Err(engine_error(NAME, "flush", "")(source));
                }
                Err(mpsc::RecvTimeoutError::Timeout) if start.elapsed() >= FULL_WAIT => {
                    if fs2::available_space(&self.folder).is_ok_and(|free| free < FULL_BYTES) {
                        let source = std::io::Error::from_raw_os_error(libc::ENOSPC);
                        return Err(engine_error(NAME, "flush", "")(source));
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
        }
    }
}

impl Drop for SledEngine {
    fn drop(&mut self) {
        let Some(db) = self.db.take() else { return };
        if !self.failed.load(Ordering::Acquire) {
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

    /// Every commit is flushed, whatever `durable` asks. sled 0.34.7 deadlocks when commits
    /// outrun its log writes: each `apply_batch` seals sled's I/O buffer twice, and each sealed
    /// buffer becomes a write on sled's pool of seven I/O threads, which never grows while they
    /// are all busy (its count of waiting threads wraps below zero). Once seven writes wait for
    /// the segment accountant's lock while its holder waits for a file truncation queued behind
    /// them, every thread of the database waits for ever. Fast mode once flushed on a timer, and
    /// then every MiB: eight writers hung under both (`tests/sled_many_writers.rs`). A flush per
    /// commit keeps the writes in flight to those of one commit (docs/format.md, "Why sled
    /// flushes in fast mode too").
    fn commit(&self, batch: WriteBatch, _durable: bool) -> Result<(), StoreError> {
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
        let mut commits = self.commits.lock();
        let mut ops = sled::Batch::default();
        for prefix in &batch.erased_prefixes {
            for key in db.scan_prefix(prefix.as_bytes()).keys() {
                let key = key.map_err(engine_error(NAME, "erase_prefix", prefix))?;
                // A put of the same batch, applied after, wins (sled keeps the last op per key).
                ops.remove(key);
            }
        }
        for (key, value) in &batch.puts {
            // sled hands a failed write of its log to the next operation, a read included.
            let staged = pieces::stage(db, &mut ops, key, value.as_deref());
            self.noting(staged)?;
        }
        // After the erased prefixes, which may cover it (sled keeps the last op per key).
        ops.insert(anchor::COUNT_KEY, &(*commits + 1).to_le_bytes()[..]);
        self.noting(db.apply_batch(ops).map_err(engine_error(NAME, "commit", "")))?;
        *commits += 1;
        let flushed = self.flush();
        self.noting(flushed)?;
        self.record(*commits);
        Ok(())
    }

    /// Every commit flushes (see `commit`), so writers share the flush in fast mode too.
    fn commit_syncs(&self, _durable: bool) -> bool {
        true
    }

    fn stable_snapshots(&self) -> bool {
        false
    }
}

/// Reads of the live tree (sled has no snapshots).
struct SledView {
    tree: sled::Tree,
}

fn utf8_key(key: &[u8]) -> Result<String, StoreError> {
    String::from_utf8(key.to_vec()).map_err(|e| StoreError::Engine {
        backend: NAME,
        operation: "list",
        key: String::from_utf8_lossy(e.as_bytes()).into_owned(),
        source: Box::new(e.utf8_error()),
    })
}

/// The whole range of a value of `len` bytes.
fn whole(len: u64) -> Result<std::ops::Range<usize>, StoreError> {
    Ok(0..len as usize)
}

impl KvSnapshot for SledView {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        pieces::read(&self.tree, key, whole)
    }

    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        pieces::read(&self.tree, key, |len| {
            range.resolve(len).ok_or_else(|| StoreError::RangeOutOfBounds {
                key: key.to_owned(),
                range: range.describe(),
                len,
            })
        })
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        pieces::size(&self.tree, key)
    }

    fn with_value(&self, key: &str, read: &mut dyn FnMut(&[u8])) -> Result<bool, StoreError> {
        Ok(self.with_value_within(key, u64::MAX, read)?.is_some())
    }

    fn with_value_within(&self, key: &str, limit: u64, read: &mut dyn FnMut(&[u8])) -> Result<Option<u64>, StoreError> {
        pieces::lend(&self.tree, key, limit, read)
    }

    fn next_key(&self, from: &str, within: &str) -> Result<Option<String>, StoreError> {
        for raw in self.tree.range(from.as_bytes()..).keys() {
            let raw = raw.map_err(engine_error(NAME, "list", from))?;
            // Pieces of a value sort just after its head: passed over. So is the head of a value
            // under `from` less its final NUL (a seek for the key after that one).
            let Some(listed) = pieces::listed(&raw) else { continue };
            let key = utf8_key(listed)?;
            if key.as_str() < from {
                continue;
            }
            return Ok(key.starts_with(within).then_some(key));
        }
        Ok(None)
    }

    fn keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        for raw in self.tree.scan_prefix(prefix.as_bytes()).keys() {
            let raw = raw.map_err(engine_error(NAME, "list", prefix))?;
            if let Some(listed) = pieces::listed(&raw) {
                out.push(utf8_key(listed)?);
            }
        }
        Ok(out)
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
