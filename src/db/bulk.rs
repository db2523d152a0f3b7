//! Bulk writes: one engine write transaction fed a window of values at a time, for imports. A
//! [`Transaction`](super::Transaction) buffers its changes until commit, which would hold a whole
//! imported dataset in memory; a bulk write hands each window to the engine at once (redb and
//! LMDB write it out before commit) and stays invisible until [`BulkWrite::commit`]. Dropping it
//! aborts, and a crash before commit leaves the database as it was.

use std::path::PathBuf;
use std::sync::Arc;

use super::transaction::WriterGuard;
use super::{check_user_key, disk_full, Database, DbShared, Snapshot};
use crate::error::Error;
use crate::store::chunk_versions;
use crate::store::kv::KvBulk;
use crate::store::ChunkVersions;
use crate::store::{Store, StreamScope};

/// An open bulk write. It holds the database's writer lock (and the engine's, which excludes
/// other processes), so the snapshot it carries is the latest commit until it ends.
pub(crate) struct BulkWrite {
    /// Declared first: ends before the writer lock is released.
    bulk: Option<Box<dyn KvBulk>>,
    snapshot: Option<Snapshot>,
    written: chunk_versions::Touched,
    /// The database's chunk versions, which the commit bumps.
    versions: Arc<ChunkVersions>,
    /// Bytes of keys and values put, for telling a full disk at commit.
    bytes: u64,
    /// The database's path, to tell a full disk (`disk_full.rs`).
    path: PathBuf,
    /// Commit durably whatever the database's mode (an import), or as the mode says (a streamed
    /// region write, which stands for the commits its chunks would otherwise have made).
    durable: bool,
    _writer: WriterGuard,
}

impl Database {
    /// Begin a bulk write of about `expected_bytes`; waits for the current writer like
    /// [`Database::begin_write`].
    pub(crate) fn begin_bulk(&self, expected_bytes: u64) -> Result<BulkWrite, Error> {
        BulkWrite::begin(&self.shared, expected_bytes, true)
    }
}

impl BulkWrite {
    /// Begin a bulk write; `durable` forces a durable commit in a fast-mode database.
    pub(super) fn begin(shared: &Arc<DbShared>, expected_bytes: u64, durable: bool) -> Result<BulkWrite, Error> {
        shared.would_deadlock()?;
        let writer = WriterGuard::acquire(shared.clone())?;
        // The engine's writer before the snapshot, so the snapshot is the latest commit of any
        // process (LMDB, redb in multi-writer mode).
        let bulk = shared.engine.clone().bulk(expected_bytes)?;
        let snapshot = Snapshot::begin(shared)?;
        Ok(BulkWrite {
            bulk: Some(bulk),
            snapshot: Some(snapshot),
            written: chunk_versions::Touched::new(),
            versions: shared.versions.clone(),
            bytes: 0,
            path: shared.path.clone(),
            durable: durable || shared.durable,
            _writer: writer,
        })
    }

    /// The database as of the bulk write's beginning (its own puts are not seen).
    pub(crate) fn before(&self) -> Arc<dyn Store> {
        self.snapshot.as_ref().expect("the snapshot lives until commit").store()
    }

    /// Write `values` (user keys only; the reserved prefix is refused).
    pub(crate) fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), Error> {
        let mut bytes = 0u64;
        for (key, value) in &values {
            check_user_key(key)?;
            self.written.note(key);
            bytes += (key.len() + value.len()) as u64;
        }
        self.bytes = self.bytes.saturating_add(bytes);
        let bulk = self.bulk.as_mut().expect("the engine transaction lives until commit");
        bulk.put(values).map_err(|e| disk_full::classify(e.into(), &self.path, bytes))
    }

    /// Erase `key` (a user key; the reserved prefix is refused).
    pub(crate) fn erase(&mut self, key: &str) -> Result<(), Error> {
        check_user_key(key)?;
        self.written.note(key);
        let bulk = self.bulk.as_mut().expect("the engine transaction lives until commit");
        bulk.erase(key).map_err(|e| disk_full::classify(e.into(), &self.path, 0))
    }

    /// Commit everything, durably unless the bulk write follows a fast-mode database.
    pub(crate) fn commit(mut self) -> Result<(), Error> {
        // Before the commit: an LMDB snapshot would keep the pages this commit frees in use.
        self.snapshot.take();
        let bulk = self.bulk.take().expect("the engine transaction lives until commit");
        // The commit writes what the engine still holds of the transaction: at most all of it.
        bulk.commit(self.durable).map_err(|e| disk_full::classify(e.into(), &self.path, self.bytes))?;
        // A read-modify-write that read one of these keys before (only possible for keys that
        // existed, i.e. a root document replaced) must find its version changed.
        self.written.bump(&self.versions);
        Ok(())
    }
}

/// A region write streamed into one bulk write (see [`Store::begin_stream`]).
impl StreamScope for BulkWrite {
    fn before(&self) -> Arc<dyn Store> {
        BulkWrite::before(self)
    }

    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), Error> {
        BulkWrite::put(self, values)
    }

    fn erase(&mut self, key: &str) -> Result<(), Error> {
        BulkWrite::erase(self, key)
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        self.commit()
    }
}
