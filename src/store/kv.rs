//! The interface between the transaction layer and an embedded key/value engine (redb, LMDB,
//! sled). An engine offers two things only: consistent read snapshots, and atomic application of
//! a batch of writes. Everything Zarr-shaped (read-your-writes, listing, auto-commit) is built once
//! on top, in `crate::db`, so every engine behaves the same.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::ByteRange;
use crate::error::{CompactError, StoreError};

/// A consistent, read-only view of the engine's keys at one commit.
pub(crate) trait KvSnapshot: Send + Sync {
    /// The whole value under `key`.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Part of the value under `key`; a range outside the value is `RangeOutOfBounds`.
    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError>;

    /// The length of the value under `key`, without copying it.
    fn size(&self, key: &str) -> Result<Option<u64>, StoreError>;

    /// Call `read` with the whole value under `key`, where the engine holds it when it can (no
    /// copy of the value's own); `false`, without calling it, when the key is absent.
    fn with_value(&self, key: &str, read: &mut dyn FnMut(&[u8])) -> Result<bool, StoreError> {
        let Some(value) = self.get(key)? else { return Ok(false) };
        read(&value);
        Ok(true)
    }

    /// The value's length (`None` when absent), calling `read` with the value only when it is
    /// at most `limit` bytes long (`ReadableStore::with_value_within`): an engine that learns
    /// the length in the lookup that finds the value answers in one lookup.
    fn with_value_within(&self, key: &str, limit: u64, read: &mut dyn FnMut(&[u8])) -> Result<Option<u64>, StoreError> {
        let size = self.size(key)?;
        super::lend_after_size(size, limit, |read| self.with_value(key, read), read)
    }

    /// Something that is equal for two snapshots exactly when they hold the same value under
    /// `key` (`None`: absent), for checking a transaction's reads against a later commit
    /// (`db/race.rs`). Engines that know where a value's bytes are answer without reading them.
    fn value_token(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.get(key)?.map(|value| {
            let (len, hash) = super::chunk_versions::fingerprint(Some(&value)).expect("a value has a fingerprint");
            [len.to_le_bytes(), hash.to_le_bytes()].concat()
        }))
    }

    /// The smallest key `>= from` that starts with `within`: one seek in the engine's B-tree.
    fn next_key(&self, from: &str, within: &str) -> Result<Option<String>, StoreError>;

    /// Every key starting with `prefix`, in order.
    fn keys(&self, prefix: &str) -> Result<Vec<String>, StoreError>;
}

/// A set of changes applied in one engine transaction: first every erased prefix, then every put
/// and delete. The transaction layer normalises its operations into this shape (a put after an
/// erase of its prefix stays in `puts`), so the order of application inside each part is free.
#[derive(Clone, Debug, Default)]
pub(crate) struct WriteBatch {
    /// Prefixes whose keys are all removed.
    pub erased_prefixes: Vec<String>,
    /// New values (`Some`) and removed keys (`None`).
    pub puts: BTreeMap<String, Option<Vec<u8>>>,
    /// What a database that keeps history records with the commit (`store/history`); engines
    /// ignore it.
    pub note: CommitNote,
}

/// The message and author of a commit, kept by a database with history.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CommitNote {
    pub message: String,
    pub author: String,
}

impl WriteBatch {
    pub fn is_empty(&self) -> bool {
        self.erased_prefixes.is_empty() && self.puts.is_empty()
    }
}

/// An embedded key/value engine holding one database.
pub(crate) trait KvEngine: Send + Sync + 'static {
    /// A read snapshot of the latest commit.
    fn snapshot(&self) -> Result<Arc<dyn KvSnapshot>, StoreError>;

    /// Apply `batch` atomically. With `durable`, the changes are on disk when this returns.
    fn commit(&self, batch: WriteBatch, durable: bool) -> Result<(), StoreError>;

    /// Whether a commit made with `durable` waits for the disk (an fsync), so that writers gain
    /// by sharing one: group commit gathers writers only then (`db/group_commit.rs`).
    fn commit_syncs(&self, durable: bool) -> bool {
        durable
    }

    /// Whether a group commit's leader should wait for writers still preparing their batch: worth
    /// it when a commit made with `durable` costs more than their wait (LMDB's two syncs), not
    /// when it takes one short sync (redb's commit log).
    fn commit_gathers(&self, durable: bool) -> bool {
        self.commit_syncs(durable)
    }

    /// Whether a snapshot stays fixed while later commits land (false for sled, whose reads see
    /// the live tree).
    fn stable_snapshots(&self) -> bool;

    /// The longest key the engine holds, for engines that have a limit (LMDB): history refuses
    /// Zarr keys whose keys of its own would be longer (`store/history/`).
    fn max_key_len(&self) -> Option<usize> {
        None
    }

    /// The longest value the engine keeps with its key; longer ones it stores apart (a bucket
    /// database's manifest pages hold short values, packs the rest). History writes a value longer
    /// than this under its object key from the start, so superseding it later copies nothing the
    /// engine already stores apart (`store/history/`). `None`: no such limit.
    fn inline_max(&self) -> Option<usize> {
        None
    }

    /// Whether other processes may commit to the same database while this one has it open
    /// (LMDB). Their commits do not bump this process's chunk versions, so a commit must compare
    /// the chunks it read with what is stored now (`db/group_commit.rs`).
    fn shared_between_processes(&self) -> bool {
        false
    }

    /// Whether a commit may lose a race to another writer instead of excluding it (a bucket
    /// database: the conditional write of its head is the only lock). Such a commit fails with
    /// [`StoreError::HeadMoved`], having applied nothing; `db/` then checks what the transaction
    /// read against the new latest commit and commits again, or reports a conflict.
    fn commits_race(&self) -> bool {
        false
    }

    /// Take the engine's own writer lock, for engines that several processes open at once (LMDB):
    /// held from the beginning of a transaction to its commit, so no other process commits in
    /// between and the transaction's snapshot stays the latest state. `None` for engines that one
    /// process holds exclusively.
    fn lock_writer(self: Arc<Self>) -> Result<Option<Box<dyn KvWriter>>, StoreError> {
        Ok(None)
    }

    /// Begin one engine write transaction that is fed a window of values at a time (an import),
    /// so that memory holds one window, not the whole transaction. It excludes other processes'
    /// writers like [`KvEngine::lock_writer`], so a snapshot taken after it began shows the
    /// latest commit. `expected_bytes` is about how much will be written (LMDB grows its map to
    /// fit first: a full map cannot be grown in the middle of the transaction). Nothing is visible until
    /// [`KvBulk::commit`]; dropping it aborts. The default buffers every value and commits them
    /// as one batch, for engines without long-lived write transactions (sled).
    fn bulk(self: Arc<Self>, _expected_bytes: u64) -> Result<Box<dyn KvBulk>, StoreError> {
        Ok(Box::new(BufferedBulk { engine: self, batch: WriteBatch::default() }))
    }

    /// Give the file space of erased and overwritten data back to the file system, so the file
    /// is about the size of the live data. Every step is a commit: a crash in the middle leaves
    /// the database as before, or compacted in part, with all its data. `database` names it in
    /// errors. The caller holds the database's writer lock. `older_than` is for engines whose
    /// garbage readers elsewhere may still read (a bucket database): what is younger stays.
    fn compact(&self, database: &str, _older_than: std::time::Duration) -> Result<(), CompactError> {
        Err(CompactError::Unsupported {
            database: database.to_owned(),
            backend: "this engine",
            why: "it has no compaction",
        })
    }
}

/// An engine write transaction fed in windows (see [`KvEngine::bulk`]). Dropping it aborts.
pub(crate) trait KvBulk {
    /// Store `values` in the transaction.
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), StoreError>;

    /// Erase `key` in the transaction (nothing happens when it is absent).
    fn erase(&mut self, key: &str) -> Result<(), StoreError>;

    /// Commit; `durable` as for [`KvEngine::commit`] (an import always asks for it: one large,
    /// rare commit pays one fsync whatever the database's mode).
    fn commit(self: Box<Self>, durable: bool) -> Result<(), StoreError>;
}

/// [`KvEngine::bulk`] for engines that only commit whole batches.
struct BufferedBulk<E: ?Sized> {
    engine: Arc<E>,
    batch: WriteBatch,
}

impl<E: KvEngine + ?Sized> KvBulk for BufferedBulk<E> {
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), StoreError> {
        for (key, value) in values {
            self.batch.puts.insert(key, Some(value));
        }
        Ok(())
    }

    fn erase(&mut self, key: &str) -> Result<(), StoreError> {
        self.batch.puts.insert(key.to_owned(), None);
        Ok(())
    }

    fn commit(self: Box<Self>, durable: bool) -> Result<(), StoreError> {
        self.engine.commit(self.batch, durable)
    }
}

/// An engine write transaction held open by a zarrdb transaction (see
/// [`KvEngine::lock_writer`]). Dropping it aborts.
pub(crate) trait KvWriter {
    /// Apply `batch` and commit; `durable` as for [`KvEngine::commit`].
    fn commit(self: Box<Self>, batch: WriteBatch, durable: bool) -> Result<(), StoreError>;
}

/// Slice `range` out of `value`, or say why it does not fit.
pub(crate) fn slice_range(key: &str, value: &[u8], range: ByteRange) -> Result<Vec<u8>, StoreError> {
    let len = value.len() as u64;
    let r = range.resolve(len).ok_or_else(|| StoreError::RangeOutOfBounds {
        key: key.to_owned(),
        range: range.describe(),
        len,
    })?;
    Ok(value[r].to_vec())
}

/// What every engine answers to a write on a handle opened read-only (`DatabaseBuilder::read_only`).
pub(crate) fn refuse_if_read_only(read_only: bool, operation: &'static str) -> Result<(), StoreError> {
    match read_only {
        true => Err(StoreError::Unsupported { store: "read-only database", operation }),
        false => Ok(()),
    }
}

/// What every engine answers when a walk over its keys goes backwards: a damaged tree can lead it
/// in circles, a sound one only goes forward.
pub(crate) fn out_of_order(backend: &'static str, operation: &'static str, key: &str) -> StoreError {
    StoreError::Damaged { backend, operation, key: key.to_owned(), what: "keys listed out of order" }
}

/// Wrap an engine's own error with the operation and key it happened on.
pub(crate) fn engine_error<E>(backend: &'static str, operation: &'static str, key: &str) -> impl FnOnce(E) -> StoreError
where
    E: std::error::Error + Send + Sync + 'static,
{
    let key = key.to_owned();
    move |source| StoreError::Engine { backend, operation, key, source: Box::new(source) }
}
