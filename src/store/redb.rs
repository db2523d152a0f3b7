//! The redb engine: one file, a copy-on-write B-tree, MVCC read snapshots.
//!
//! Zarr keys are the keys of one table, `zarr`, ordered bytewise as UTF-8 strings; values are the
//! stored bytes. A commit is one redb write transaction (`Durability::Immediate` in durable mode:
//! redb's two-slot commit with fsync; `Durability::None` in fast mode, made durable by the next
//! durable commit or when the database closes).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use redb::{ReadOnlyTable, ReadableDatabase, ReadableTable, TableDefinition};

use super::kv::{engine_error, slice_range, KvEngine, KvSnapshot, WriteBatch};
use super::ByteRange;
use crate::error::{OpenError, StoreError};

const TABLE: TableDefinition<&str, &[u8]> = TableDefinition::new("zarr");
const NAME: &str = "redb";

pub(crate) struct RedbEngine {
    db: redb::Database,
    /// A fast-mode commit has not yet been made durable.
    unsynced: AtomicBool,
}

impl RedbEngine {
    pub fn open(path: &Path, create: bool, cache_size: Option<usize>) -> Result<RedbEngine, OpenError> {
        let mut builder = redb::Builder::new();
        if let Some(bytes) = cache_size {
            builder.set_cache_size(bytes);
        }
        let opened = if create { builder.create(path) } else { builder.open(path) };
        let db = opened.map_err(|e| open_error(path, e))?;
        Ok(RedbEngine { db, unsynced: AtomicBool::new(false) })
    }

    fn apply(&self, batch: &WriteBatch, durable: bool) -> Result<(), StoreError> {
        let mut txn = self.db.begin_write().map_err(engine_error(NAME, "begin_write", ""))?;
        let durability = if durable { redb::Durability::Immediate } else { redb::Durability::None };
        txn.set_durability(durability).map_err(engine_error(NAME, "set_durability", ""))?;
        {
            let mut table = txn.open_table(TABLE).map_err(engine_error(NAME, "open_table", ""))?;
            for prefix in &batch.erased_prefixes {
                let doomed: Vec<String> = {
                    let range = table.range(prefix.as_str()..).map_err(engine_error(NAME, "erase_prefix", prefix))?;
                    let mut keys = Vec::new();
                    for entry in range {
                        let (k, _) = entry.map_err(engine_error(NAME, "erase_prefix", prefix))?;
                        if !k.value().starts_with(prefix.as_str()) {
                            break;
                        }
                        keys.push(k.value().to_owned());
                    }
                    keys
                };
                for key in doomed {
                    table.remove(key.as_str()).map_err(engine_error(NAME, "erase_prefix", &key))?;
                }
            }
            for (key, value) in &batch.puts {
                match value {
                    Some(v) => table.insert(key.as_str(), v.as_slice()).map(drop),
                    None => table.remove(key.as_str()).map(drop),
                }
                .map_err(engine_error(NAME, "commit", key))?;
            }
        }
        txn.commit().map_err(engine_error(NAME, "commit", ""))
    }
}

impl KvEngine for RedbEngine {
    fn snapshot(&self) -> Result<Arc<dyn KvSnapshot>, StoreError> {
        let txn = self.db.begin_read().map_err(engine_error(NAME, "begin_read", ""))?;
        let table = match txn.open_table(TABLE) {
            Ok(t) => Some(t),
            Err(redb::TableError::TableDoesNotExist(_)) => None,
            Err(e) => return Err(engine_error(NAME, "open_table", "")(e)),
        };
        Ok(Arc::new(RedbSnapshot { table }))
    }

    fn commit(&self, batch: WriteBatch, durable: bool) -> Result<(), StoreError> {
        self.apply(&batch, durable)?;
        if durable {
            self.unsynced.store(false, Ordering::Release);
        } else {
            self.unsynced.store(true, Ordering::Release);
        }
        Ok(())
    }

    fn stable_snapshots(&self) -> bool {
        true
    }
}

impl Drop for RedbEngine {
    fn drop(&mut self) {
        // redb keeps `Durability::None` commits off the disk until a durable commit follows, so a
        // fast-mode database closed cleanly would otherwise lose them. An empty durable commit
        // persists them. An error here has no caller to go to; the commits stay lost as after a crash.
        if self.unsynced.load(Ordering::Acquire) {
            let _ = self.apply(&WriteBatch::default(), true);
        }
    }
}

struct RedbSnapshot {
    /// `None` in a database where nothing was ever written.
    table: Option<ReadOnlyTable<&'static str, &'static [u8]>>,
}

impl RedbSnapshot {
    fn with_value<R>(
        &self,
        key: &str,
        f: impl FnOnce(&[u8]) -> Result<R, StoreError>,
    ) -> Result<Option<R>, StoreError> {
        let Some(table) = &self.table else { return Ok(None) };
        match table.get(key).map_err(engine_error(NAME, "get", key))? {
            Some(guard) => f(guard.value()).map(Some),
            None => Ok(None),
        }
    }
}

impl KvSnapshot for RedbSnapshot {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.with_value(key, |v| Ok(v.to_vec()))
    }

    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        self.with_value(key, |v| slice_range(key, v, range))
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        self.with_value(key, |v| Ok(v.len() as u64))
    }

    fn next_key(&self, from: &str, within: &str) -> Result<Option<String>, StoreError> {
        let Some(table) = &self.table else { return Ok(None) };
        let mut range = table.range(from..).map_err(engine_error(NAME, "list", from))?;
        match range.next() {
            Some(entry) => {
                let (k, _) = entry.map_err(engine_error(NAME, "list", from))?;
                Ok(k.value().starts_with(within).then(|| k.value().to_owned()))
            }
            None => Ok(None),
        }
    }

    fn keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let Some(table) = &self.table else { return Ok(Vec::new()) };
        let mut keys = Vec::new();
        for entry in table.range(prefix..).map_err(engine_error(NAME, "list", prefix))? {
            let (k, _) = entry.map_err(engine_error(NAME, "list", prefix))?;
            if !k.value().starts_with(prefix) {
                break;
            }
            keys.push(k.value().to_owned());
        }
        Ok(keys)
    }
}

fn open_error(path: &Path, error: redb::DatabaseError) -> OpenError {
    let path = path.display().to_string();
    match error {
        redb::DatabaseError::DatabaseAlreadyOpen => OpenError::Locked { path, backend: NAME },
        redb::DatabaseError::Storage(redb::StorageError::Io(source)) => OpenError::Io { path, source },
        e @ (redb::DatabaseError::Storage(redb::StorageError::Corrupted(_))
        | redb::DatabaseError::UpgradeRequired(_)
        | redb::DatabaseError::RepairAborted) => OpenError::Corrupted { path, backend: NAME, source: Box::new(e) },
        e => OpenError::Engine { path, backend: NAME, source: Box::new(e) },
    }
}
