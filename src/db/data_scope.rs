//! The scope of a region write on the auto-commit store: chunks are read, patched and encoded
//! without the database's writer lock, then committed in one short locked step.
//!
//! A region write that held the writer lock while encoding would queue every other writer behind
//! it, and could deadlock: its encoding runs on rayon's pool, and a pool thread that picks up
//! another writer's task while it waits would wait for the lock its own stack holds. Here the lock
//! is taken only in `finish_checked`, which runs no pool work. What reading without the lock could
//! lose is checked there instead: each read-modify-written chunk records the version of its chunk
//! counter noted before the read (`store/chunk_versions.rs`), and the batch commits only if every such
//! version is unchanged; otherwise nothing is written and the region write runs again.
//!
//! Every read takes a fresh snapshot, after the chunk's version was noted, so it sees every
//! commit that version accounts for.

use crate::store::Sealed;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::group_commit::GroupCommit;
use super::overlay::{self, Lookup, WriteSet};
use super::transaction::with_live;
use super::{check_user_key, DbShared};
use crate::error::{Error, StoreError, TransactionError};
use crate::store::chunk_versions::{fingerprint, Fingerprint};
use crate::store::kv::slice_range;
use crate::store::{
    ByteRange, ChunkVersions, DirListing, ListableStore, ReadableStore, Store, StoreCapabilities, StoreScope,
    WritableStore,
};

/// The scope: its store buffers the writes; finishing commits them if no chunk read changed.
/// The flag is set while the scope counts as open for group commit.
pub(super) struct DataScope(Arc<DataStore>, Cell<bool>);

impl DataScope {
    /// Stop counting as an open scope (once).
    fn close(&self) {
        if self.1.replace(false) {
            self.0.db.group.closed();
        }
    }
}

impl Drop for DataScope {
    fn drop(&mut self) {
        self.close();
    }
}

impl DataScope {
    pub(super) fn begin(db: Arc<DbShared>) -> Result<DataScope, Error> {
        // Committing would wait for this thread's own open transaction.
        db.would_deadlock()?;
        let state =
            Mutex::new(Some(DataState { writes: WriteSet::default(), checks: Vec::new(), read: HashMap::new() }));
        db.group.opened();
        Ok(DataScope(Arc::new(DataStore { db, state }), Cell::new(true)))
    }
}

impl StoreScope for DataScope {
    fn store(&self) -> Arc<dyn Store> {
        self.0.clone()
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        let key = self.0.state.lock().as_ref().and_then(|s| s.checks.first().map(|c| c.key.clone()));
        match self.finish_checked()? {
            true => Ok(()),
            false => Err(TransactionError::Conflict { key: key.unwrap_or_default() }.into()),
        }
    }

    fn finish_checked(self: Box<Self>) -> Result<bool, Error> {
        let Some(state) = self.0.state.lock().take() else { return Ok(true) };
        let batch = state.writes.into_batch();
        if batch.is_empty() {
            return Ok(true);
        }
        // Queued from here on: `GroupCommit::commit` counts the scope closed when it queues.
        self.1.set(false);
        GroupCommit::commit(&self.0.db, batch, state.checks)
    }
}

struct DataState {
    writes: WriteSet,
    /// Chunks read for a read-modify-write: the version noted before reading each, and what was
    /// read.
    checks: Vec<Check>,
    /// What each key read from the database held, for the checks.
    read: HashMap<String, Fingerprint>,
}

/// A chunk read for a read-modify-write: its commit needs the chunk's version unchanged and,
/// when other processes share the database, its stored value too.
pub(super) struct Check {
    pub key: String,
    pub version: u64,
    pub read: Fingerprint,
}

pub(super) struct DataStore {
    db: Arc<DbShared>,
    /// `None` once the scope finished.
    state: Mutex<Option<DataState>>,
}

impl DataStore {
    fn with<R>(
        &self,
        operation: &'static str,
        key: &str,
        f: impl FnOnce(&mut DataState) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        with_live(&self.state, operation, key, f)
    }

    /// The buffered value of `key` (`Ok(Some(None))` when buffered as erased), or `Ok(None)` when
    /// the buffer does not know it and the database must answer.
    fn buffered(&self, operation: &'static str, key: &str) -> Result<Option<Option<Vec<u8>>>, StoreError> {
        check_user_key(key)?;
        self.with(operation, key, |s| {
            Ok(match s.writes.lookup(key) {
                Lookup::Value(v) => Some(Some(v.to_vec())),
                Lookup::Absent => Some(None),
                Lookup::Unknown => None,
            })
        })
    }
}

impl ReadableStore for DataStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        match self.buffered("get", key)? {
            Some(answer) => Ok(answer),
            None => {
                let value = self.db.engine.snapshot()?.get(key)?;
                if self.db.engine.shared_between_processes() {
                    let read = fingerprint(value.as_deref());
                    self.with("get", key, |s| {
                        s.read.insert(key.to_owned(), read);
                        Ok(())
                    })?;
                }
                Ok(value)
            }
        }
    }

    fn get_partial_values(&self, requests: &[(&str, ByteRange)]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        // One snapshot for all the ranges, so they come from one value.
        let snapshot = self.db.engine.snapshot()?;
        requests
            .iter()
            .map(|(key, range)| match self.buffered("get_partial_values", key)? {
                Some(answer) => answer.map(|v| slice_range(key, &v, *range)).transpose(),
                None => snapshot.get_range(key, *range),
            })
            .collect()
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        match self.buffered("size", key)? {
            Some(answer) => Ok(answer.map(|v| v.len() as u64)),
            None => self.db.engine.snapshot()?.size(key),
        }
    }
}

impl WritableStore for DataStore {
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.set_owned(key, value.to_vec())
    }

    fn set_owned(&self, key: &str, value: Vec<u8>) -> Result<(), StoreError> {
        check_user_key(key)?;
        self.with("set", key, |s| {
            s.writes.put(key, value);
            Ok(())
        })
    }

    fn set_partial_values(&self, writes: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        for (key, offset, bytes) in writes {
            let mut value = self.get(key)?.unwrap_or_default();
            overlay::patch(key, &mut value, *offset, bytes)?;
            self.set_owned(key, value)?;
        }
        Ok(())
    }

    fn erase(&self, key: &str) -> Result<(), StoreError> {
        check_user_key(key)?;
        self.with("erase", key, |s| {
            s.writes.delete(key);
            Ok(())
        })
    }

    fn erase_prefix(&self, prefix: &str) -> Result<(), StoreError> {
        // Region writes erase single chunks only; a prefix is erased key by key, so the
        // bookkeeping prefix is never touched.
        for key in self.list_prefix(prefix)? {
            self.erase(&key)?;
        }
        Ok(())
    }
}

impl ListableStore for DataStore {
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let snapshot = self.db.engine.snapshot()?;
        self.with("list_prefix", prefix, |s| overlay::list_prefix(snapshot.as_ref(), Some(&s.writes), prefix))
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError> {
        let snapshot = self.db.engine.snapshot()?;
        self.with("list_dir", prefix, |s| overlay::list_dir(snapshot.as_ref(), Some(&s.writes), prefix))
    }
}

impl Store for DataStore {
    fn capabilities(&self) -> StoreCapabilities {
        self.db.capabilities(true)
    }

    fn kind(&self) -> &'static str {
        self.db.backend.name()
    }

    fn chunk_versions(&self, _sealed: Sealed) -> &ChunkVersions {
        &self.db.versions
    }

    fn bumps_chunk_versions_at_commit(&self, _sealed: Sealed) -> bool {
        true
    }

    fn defer_chunk_check(&self, key: &str, version: u64, _sealed: Sealed) -> bool {
        self.with("set", key, |s| {
            let read = s.read.get(key).copied().flatten();
            s.checks.push(Check { key: key.to_owned(), version, read });
            Ok(())
        })
        .is_ok()
    }
}
