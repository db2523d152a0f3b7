//! The auto-commit store: every call outside an explicit transaction commits on its own.
//!
//! Single store calls each run in a transaction of their own. Array and group operations ask for a
//! scope first ([`Store::begin_scope`]), so a region write that touches a thousand chunks is one
//! commit (and one fsync), not a thousand, and a region read sees one snapshot.

use crate::store::Sealed;
use std::sync::Arc;

use super::data_scope::DataScope;
use super::snapshot::ReadScope;
use super::transaction::TxnScope;
use super::{check_user_key, overlay, DbShared, Snapshot, Transaction};
use crate::error::{Error, StoreError};
use crate::store::{
    ByteRange, ChunkVersions, DirListing, ListableStore, ReadableStore, Store, StoreCapabilities, StoreScope,
    StreamScope, WritableStore,
};

pub(crate) struct AutoCommitStore {
    db: Arc<DbShared>,
}

impl AutoCommitStore {
    pub(super) fn new(db: Arc<DbShared>) -> AutoCommitStore {
        AutoCommitStore { db }
    }

    /// Run one write in a transaction of its own.
    fn write(&self, f: impl FnOnce(&dyn Store) -> Result<(), StoreError>) -> Result<(), StoreError> {
        let txn = Transaction::begin(self.db.clone()).map_err(|e| into_store_error(e, "write"))?;
        f(txn.store().as_ref())?;
        txn.commit().map_err(|e| into_store_error(e, "commit"))
    }

    /// Run one write that reads nothing through group commit: callers setting keys at the same
    /// time (zarr-python stores a chunk per call, many at once) share one engine commit and one
    /// fsync, and each still returns only once its own write is committed.
    fn grouped(&self, f: impl FnOnce(&dyn Store) -> Result<(), StoreError>) -> Result<(), StoreError> {
        let scope: Box<dyn StoreScope> =
            Box::new(DataScope::begin(self.db.clone()).map_err(|e| into_store_error(e, "write"))?);
        f(scope.store().as_ref())?;
        // Without reads there are no checks to fail: `false` cannot come back.
        scope.finish().map_err(|e| into_store_error(e, "commit"))
    }
}

/// Store calls return [`StoreError`]; the only other errors a one-call transaction can meet are
/// store errors wrapped in [`Error`], or the deadlock refusal, reported as an unsupported call.
fn into_store_error(error: Error, operation: &'static str) -> StoreError {
    match error {
        Error::Store(e) => e,
        _ => StoreError::Unsupported { store: "auto-commit store inside an open write transaction", operation },
    }
}

impl ReadableStore for AutoCommitStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        check_user_key(key)?;
        self.db.engine.snapshot()?.get(key)
    }

    fn get_partial_values(&self, requests: &[(&str, ByteRange)]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let snapshot = self.db.engine.snapshot()?;
        requests
            .iter()
            .map(|(key, range)| {
                check_user_key(key)?;
                snapshot.get_range(key, *range)
            })
            .collect()
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        check_user_key(key)?;
        self.db.engine.snapshot()?.size(key)
    }

    fn with_value(&self, key: &str, read: &mut dyn FnMut(&[u8])) -> Result<bool, StoreError> {
        check_user_key(key)?;
        self.db.engine.snapshot()?.with_value(key, read)
    }

    /// One snapshot and one lookup where asking the size first would take two of each.
    fn with_value_within(&self, key: &str, limit: u64, read: &mut dyn FnMut(&[u8])) -> Result<Option<u64>, StoreError> {
        check_user_key(key)?;
        self.db.engine.snapshot()?.with_value_within(key, limit, read)
    }
}

impl WritableStore for AutoCommitStore {
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.set_owned(key, value.to_vec())
    }

    fn set_owned(&self, key: &str, value: Vec<u8>) -> Result<(), StoreError> {
        check_user_key(key)?;
        self.grouped(|s| s.set_owned(key, value))
    }

    fn set_partial_values(&self, writes: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        self.write(|s| s.set_partial_values(writes))
    }

    fn erase(&self, key: &str) -> Result<(), StoreError> {
        check_user_key(key)?;
        self.write(|s| s.erase(key))
    }

    fn erase_values(&self, keys: &[&str]) -> Result<(), StoreError> {
        self.write(|s| s.erase_values(keys))
    }

    fn erase_prefix(&self, prefix: &str) -> Result<(), StoreError> {
        self.write(|s| s.erase_prefix(prefix))
    }
}

impl ListableStore for AutoCommitStore {
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        overlay::list_prefix(self.db.engine.snapshot()?.as_ref(), None, prefix)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError> {
        overlay::list_dir(self.db.engine.snapshot()?.as_ref(), None, prefix)
    }
}

impl Store for AutoCommitStore {
    fn capabilities(&self) -> StoreCapabilities {
        self.db.capabilities(!self.db.read_only)
    }

    fn kind(&self) -> &'static str {
        self.db.backend.name()
    }

    fn chunk_versions(&self, _sealed: Sealed) -> &ChunkVersions {
        &self.db.versions
    }

    fn begin_data_scope(&self, _sealed: Sealed) -> Result<Option<Box<dyn StoreScope>>, Error> {
        Ok(Some(Box::new(DataScope::begin(self.db.clone())?)))
    }

    /// None where commits race (a bucket database): a stream reads the chunks it covers in part
    /// once, at its start, and cannot recheck them over a head another writer moved, so such a
    /// write would fail where the data scope's commit rebases (`race.rs`).
    fn begin_stream(&self, expected_bytes: u64, _sealed: Sealed) -> Result<Option<Box<dyn StreamScope>>, Error> {
        if self.db.engine.commits_race() {
            return Ok(None);
        }
        Ok(Some(Box::new(super::bulk::BulkWrite::begin(&self.db, expected_bytes, false)?)))
    }

    fn begin_scope(&self, write: bool, _sealed: Sealed) -> Result<Option<Box<dyn StoreScope>>, Error> {
        Ok(Some(if write {
            Box::new(TxnScope(Transaction::begin(self.db.clone())?))
        } else {
            Box::new(ReadScope(Snapshot::begin(&self.db)?))
        }))
    }
}
