//! Read snapshots: a read-only store fixed at one commit.

use crate::store::Sealed;
use std::sync::Arc;

use super::overlay;
use super::{check_user_key, DbShared};
use crate::error::{Error, StoreError};
use crate::store::kv::KvSnapshot;
use crate::store::{
    ByteRange, ChunkVersions, DirListing, ListableStore, ReadableStore, Store, StoreCapabilities, StoreScope,
    WritableStore,
};

/// A consistent read-only view of the database at the commit that was latest when it began.
/// Writers go on committing; the snapshot does not change (except on sled, see
/// [`crate::Database::stable_snapshots`]).
///
/// ```
/// use zarrdb::{Array, ArrayMetadata, DataType, Database};
/// let dir = tempfile::tempdir().unwrap();
/// let db = Database::create(dir.path().join("s.zarrdb"))?;
/// let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![2], vec![2]))?;
/// let before = db.begin_read()?;
/// a.write_region(&[0], &[2], &[7u8, 8])?;
/// assert_eq!(Array::open(before.store(), "/a")?.read_all::<u8>()?, vec![0, 0]);
/// assert_eq!(Array::open(db.store(), "/a")?.read_all::<u8>()?, vec![7, 8]);
/// # Ok::<(), zarrdb::Error>(())
/// ```
#[derive(Clone)]
pub struct Snapshot {
    store: Arc<SnapshotStore>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("backend", &self.store.kind).finish()
    }
}

impl Snapshot {
    pub(super) fn begin(db: &Arc<DbShared>) -> Result<Snapshot, Error> {
        let snapshot = db.engine.snapshot()?;
        let store =
            SnapshotStore { snapshot, kind: db.backend.name(), stable: db.engine.stable_snapshots(), _db: db.clone() };
        Ok(Snapshot { store: Arc::new(store) })
    }

    /// A snapshot of one version of a database with history, which never changes.
    pub(super) fn of_version(db: &Arc<DbShared>, version: Arc<dyn KvSnapshot>) -> Snapshot {
        let store = SnapshotStore { snapshot: version, kind: db.backend.name(), stable: true, _db: db.clone() };
        Snapshot { store: Arc::new(store) }
    }

    /// The read-only store of this snapshot; writes through it are [`StoreError::Unsupported`].
    pub fn store(&self) -> Arc<dyn Store> {
        self.store.clone()
    }
}

pub(crate) struct SnapshotStore {
    /// Declared first, so it is dropped before the engine it reads from.
    snapshot: Arc<dyn KvSnapshot>,
    kind: &'static str,
    stable: bool,
    /// The engine stays open while a snapshot of it is alive.
    _db: Arc<DbShared>,
}

impl SnapshotStore {
    fn refuse(&self, operation: &'static str) -> Result<(), StoreError> {
        Err(StoreError::Unsupported { store: "read snapshot", operation })
    }
}

impl ReadableStore for SnapshotStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        check_user_key(key)?;
        self.snapshot.get(key)
    }

    fn get_partial_values(&self, requests: &[(&str, ByteRange)]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        requests
            .iter()
            .map(|(key, range)| {
                check_user_key(key)?;
                self.snapshot.get_range(key, *range)
            })
            .collect()
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        check_user_key(key)?;
        self.snapshot.size(key)
    }

    fn with_value(&self, key: &str, read: &mut dyn FnMut(&[u8])) -> Result<bool, StoreError> {
        check_user_key(key)?;
        self.snapshot.with_value(key, read)
    }

    fn with_value_within(&self, key: &str, limit: u64, read: &mut dyn FnMut(&[u8])) -> Result<Option<u64>, StoreError> {
        check_user_key(key)?;
        self.snapshot.with_value_within(key, limit, read)
    }
}

impl WritableStore for SnapshotStore {
    fn set(&self, _key: &str, _value: &[u8]) -> Result<(), StoreError> {
        self.refuse("set")
    }

    fn set_partial_values(&self, _writes: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        self.refuse("set_partial_values")
    }

    fn erase(&self, _key: &str) -> Result<(), StoreError> {
        self.refuse("erase")
    }

    fn erase_prefix(&self, _prefix: &str) -> Result<(), StoreError> {
        self.refuse("erase_prefix")
    }
}

impl ListableStore for SnapshotStore {
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        overlay::list_prefix(self.snapshot.as_ref(), None, prefix)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError> {
        overlay::list_dir(self.snapshot.as_ref(), None, prefix)
    }
}

impl Store for SnapshotStore {
    fn capabilities(&self) -> StoreCapabilities {
        StoreCapabilities {
            readable: true,
            writable: false,
            partial_writes: false,
            listable: true,
            atomic_multi_key: true,
            stable_snapshots: self.stable,
        }
    }

    fn kind(&self) -> &'static str {
        self.kind
    }

    fn chunk_versions(&self, _sealed: Sealed) -> &ChunkVersions {
        &self._db.versions
    }
}

/// A read scope opened by an auto-commit store: one snapshot for a whole region read.
pub(super) struct ReadScope(pub(super) Snapshot);

impl StoreScope for ReadScope {
    fn store(&self) -> Arc<dyn Store> {
        self.0.store()
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        Ok(())
    }
}
