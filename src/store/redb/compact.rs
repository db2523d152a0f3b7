//! Compaction of a redb file: redb's own, in place, when nothing reads the file; otherwise a copy
//! of the latest commit into a new file that replaces the old one by a rename.
//!
//! redb's `compact()` moves pages within the file, each step a commit, and refuses while a read
//! transaction is open: a reader may still see the pages it would move. A program that holds a
//! snapshot (a long export, a reader thread) would then never get its space back. In the
//! single-process mode no other process has the file open (redb locks it), so the latest commit
//! is copied instead, value by value, into a new file beside it (created exclusively under a name
//! of this process, `.NAME.compacting.PID.N`), given the old file's owner, group and mode,
//! synced and renamed over the old name: a crash leaves the old file (and a stray copy, which the
//! next compaction removes once its process is gone) or the new one. Open snapshots keep reading the old file, now nameless, until they
//! end. In multi-writer mode other processes may hold the old file open and would go on writing
//! to it, so only the in-place compaction runs there.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

use redb::{ReadableDatabase, TableDefinition};

use super::tables::{TABLE, TAILS};
use super::{engine_error, open_database, unpanicked, RedbEngine, RedbOptions, NAME};
use crate::error::{CompactError, StoreError};
use crate::store::beside;

/// Bytes of values copied per transaction into the new file: bounds the dirty pages redb keeps
/// in memory until a commit.
const COPY_BATCH_BYTES: usize = 64 << 20;

impl RedbEngine {
    /// [`crate::store::kv::KvEngine::compact`] for redb.
    pub(super) fn compact_file(&self, database: &str) -> Result<(), CompactError> {
        if self.read_only {
            return Err(CompactError::ReadOnly { database: database.to_owned() });
        }
        let failed = |source| CompactError::Engine { database: database.to_owned(), source };
        // Where a copy may replace the file: a file of its own that no other process holds.
        let copyable = self.db.reopen_target().filter(|_| !self.multi_writer);
        if let Some((path, _)) = &copyable {
            // Copies earlier compactions left when they were interrupted: redb files, under the
            // names of this build and the one name builds before used.
            beside::remove_abandoned(path, COPY, super::is_redb_file);
            if let Some(name) = path.file_name() {
                let older = path.with_file_name(format!(".{}.{COPY}", name.to_string_lossy()));
                beside::remove_if_owned(&older, super::is_redb_file);
            }
        }
        let compacted = self.compact_in_place().map_err(failed)?;
        let copied = !compacted;
        if copied {
            let Some((path, options)) = copyable else {
                return Err(CompactError::InUse {
                    database: database.to_owned(),
                    holder: "a read snapshot or transaction",
                });
            };
            self.compact_by_copy(&path, options).map_err(failed)?;
        }
        // Both end with a durable commit of everything committed before, fast commits too.
        self.unsynced.store(false, Ordering::Release);
        let mut commits = self.commits.lock();
        commits.last_sync = Instant::now();
        if let Some(log) = &mut commits.log {
            log.checkpointed();
            if copied {
                // The log is tied to the file's inode, which the copy does not have: the next
                // record goes to a log made for it.
                log.remove();
            }
        }
        Ok(())
    }

    /// redb's compaction; `false` when a read transaction made redb refuse (nothing moved).
    fn compact_in_place(&self) -> Result<bool, StoreError> {
        let compacted = self.db.exclusive("compact", |db| {
            unpanicked("compact", "", || match db.compact() {
                Ok(_) => Ok(true),
                Err(redb::CompactionError::TransactionInProgress) => Ok(false),
                Err(e) => Err(engine_error(NAME, "compact", "")(e)),
            })
        })?;
        // A snapshot shares the database: redb would refuse as well.
        Ok(compacted.unwrap_or(false))
    }

    /// Copy the latest commit into a new file and put it in the place of `path`.
    fn compact_by_copy(&self, path: &Path, options: RedbOptions) -> Result<(), StoreError> {
        let copy = beside::unique_beside(path, COPY);
        let io =
            |e: std::io::Error| StoreError::Io { operation: "compact", key: copy.display().to_string(), source: e };
        let file = beside::create_new(&copy, 0o600).map_err(io)?;
        let held = file.try_clone().map_err(io)?;
        let written = beside::take_owner_and_mode(&held, path, 0o7777)
            .map_err(|source| StoreError::Io {
                operation: "compact: give the copy the database's owner, group and mode",
                key: path.display().to_string(),
                source,
            })
            .and_then(|()| self.copy_latest(file, options))
            .and_then(|()| held.sync_all().map_err(io));
        if let Err(e) = written {
            let _ = beside::remove_held(&copy, &held);
            return Err(e);
        }
        self.db.replace("compact", || {
            // The copy is still the file this process made (nothing put another in its place).
            if !beside::names(&copy, &held) {
                return Err(io(std::io::Error::other("the compacted copy was replaced by another file")));
            }
            std::fs::rename(&copy, path).map_err(io)?;
            beside::sync_folder(path).map_err(io)
        })
    }

    /// Every entry of the latest commit, segments and tails as they are, into a new database at
    /// `copy`.
    fn copy_latest(&self, copy: std::fs::File, options: RedbOptions) -> Result<(), StoreError> {
        let db = self.db.get("compact")?;
        unpanicked("compact", "", || {
            let read = db.begin_read().map_err(engine_error(NAME, "begin_read", ""))?;
            let plain = RedbOptions { multi_writer: false, read_only: false, verify: false, ..options };
            let shown = Path::new("(the compacted copy)");
            let mut new = open_database(shown, plain, |builder| {
                builder.create_with_backend(redb::backends::FileBackend::new(copy.try_clone()?)?)
            })
            .map_err(|e| StoreError::Engine {
                backend: NAME,
                operation: "compact",
                key: String::new(),
                source: Box::new(e),
            })?;
            for (definition, last) in [(TAILS, false), (TABLE, true)] {
                let table = match read.open_table(definition) {
                    Ok(t) => Some(t),
                    Err(redb::TableError::TableDoesNotExist(_)) => None,
                    Err(e) => return Err(engine_error(NAME, "open_table", "")(e)),
                };
                let entries = match &table {
                    Some(t) => Some(t.range::<&[u8]>(..).map_err(engine_error(NAME, "compact", ""))?),
                    None => None,
                };
                copy_table(&new, definition, entries, last)?;
            }
            // The new file grew by doubling; cut it to its pages before it takes the old name.
            new.compact().map_err(engine_error(NAME, "compact", ""))?;
            Ok(())
        })
    }
}

/// Copy `entries` into the table `definition` of `new`, in commits of `COPY_BATCH_BYTES`; the
/// very `last` commit of the copy is durable.
fn copy_table(
    new: &redb::Database,
    definition: TableDefinition<&[u8], &[u8]>,
    mut entries: Option<redb::Range<'_, &'static [u8], &'static [u8]>>,
    last: bool,
) -> Result<(), StoreError> {
    loop {
        let mut txn = new.begin_write().map_err(engine_error(NAME, "compact", ""))?;
        let mut bytes = 0;
        {
            let mut out = txn.open_table(definition).map_err(engine_error(NAME, "compact", ""))?;
            for entry in entries.iter_mut().flatten() {
                let (k, v) = entry.map_err(engine_error(NAME, "compact", ""))?;
                out.insert(k.value(), v.value()).map_err(engine_error(NAME, "compact", ""))?;
                bytes += k.value().len() + v.value().len();
                if bytes >= COPY_BATCH_BYTES {
                    break;
                }
            }
        }
        let done = bytes < COPY_BATCH_BYTES;
        let durability = if done && last { redb::Durability::Immediate } else { redb::Durability::None };
        txn.set_durability(durability).map_err(engine_error(NAME, "compact", ""))?;
        txn.commit().map_err(engine_error(NAME, "compact", ""))?;
        if done {
            return Ok(());
        }
    }
}

/// What the copy's name says it is (see [`beside::unique_beside`]).
const COPY: &str = "compacting";
