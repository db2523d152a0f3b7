//! Stores: the abstract store interface of the Zarr v3 spec, split by capability, and its backends.
//!
//! Keys are Zarr keys exactly (`zarr.json`, `a/b/c/0/1`), compared bytewise. Every backend passes
//! the same conformance suite (`tests/store_conformance.rs`).

pub(crate) mod beside;
#[cfg(feature = "object-store")]
pub(crate) mod bucket;
pub(crate) mod chunk_versions;
mod directory;
pub(crate) mod folder;
pub(crate) mod history;
pub(crate) mod kv;
mod lmdb;
mod log;
mod memory;
#[cfg(feature = "object-store")]
mod object;
mod panic;
pub(crate) mod pending;
pub(crate) mod per_file;
mod redb;
mod sled;
pub(crate) mod special;
pub(crate) mod zip;

pub use chunk_versions::ChunkVersions;
pub use directory::DirectoryStore;
pub use memory::MemoryStore;
#[cfg(feature = "object-store")]
pub use object::ObjectStore;
pub use zip::ZipStore;

use crate::key::validate_key;
pub(crate) use lmdb::{LmdbEngine, CHECKSUM_FLAG_KEY as LMDB_CHECKSUM_FLAG_KEY};
pub(crate) use log::fuzzing as log_fuzzing;
#[cfg(test)]
pub(crate) use log::LogFile;
pub(crate) use redb::{is_redb_file, RedbEngine, RedbOptions, REDB_MAGIC, SHARED_LOG_CAPACITY};
pub(crate) use sled::SledEngine;

use std::sync::Arc;

use crate::error::StoreError;

/// A byte range of a value, for partial reads (spec `get_partial_values`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteRange {
    /// `length` bytes from `offset` (to the end when `None`).
    FromStart {
        /// First byte.
        offset: u64,
        /// Number of bytes, or the rest of the value.
        length: Option<u64>,
    },
    /// The last `n` bytes.
    Suffix(u64),
}

impl ByteRange {
    /// The `start..end` positions of this range in a value of `len` bytes, if it fits.
    pub fn resolve(&self, len: u64) -> Option<std::ops::Range<usize>> {
        let (start, end) = match *self {
            ByteRange::FromStart { offset, length: None } => (offset, len),
            ByteRange::FromStart { offset, length: Some(n) } => (offset, offset.checked_add(n)?),
            ByteRange::Suffix(n) => (len.checked_sub(n)?, len),
        };
        (start <= end && end <= len).then_some(start as usize..end as usize)
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            ByteRange::FromStart { offset, length: None } => format!("{offset}.."),
            ByteRange::FromStart { offset, length: Some(n) } => format!("{offset}..+{n}"),
            ByteRange::Suffix(n) => format!("last {n}"),
        }
    }
}

/// What a store supports. An unsupported operation returns [`StoreError::Unsupported`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreCapabilities {
    /// `get`, `get_partial_values`.
    pub readable: bool,
    /// `set`, `erase`, `erase_values`, `erase_prefix`.
    pub writable: bool,
    /// `set_partial_values`.
    pub partial_writes: bool,
    /// `list`, `list_prefix`, `list_dir`.
    pub listable: bool,
    /// Several keys can change in one atomic step (transactions).
    pub atomic_multi_key: bool,
    /// A read scope ([`Store::begin_scope`], a database snapshot) sees one commit however long it
    /// is held. False for sled (reads see the live tree) and for stores without snapshots.
    pub stable_snapshots: bool,
}

/// The children of a prefix, as returned by [`ListableStore::list_dir`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirListing {
    /// Names of keys directly under the prefix (no `/` after the prefix).
    pub keys: Vec<String>,
    /// Names of child prefixes (each holds at least one key), without the trailing `/`.
    pub prefixes: Vec<String>,
}

impl DirListing {
    /// Whether nothing lies under the prefix.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.prefixes.is_empty()
    }
}

/// Reading values.
pub trait ReadableStore: Send + Sync {
    /// The value under `key`, or `None` when absent.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Parts of values; `None` for absent keys. A range outside its value is an error.
    fn get_partial_values(&self, requests: &[(&str, ByteRange)]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        requests
            .iter()
            .map(|(key, range)| {
                let Some(value) = self.get(key)? else { return Ok(None) };
                let r = range.resolve(value.len() as u64).ok_or_else(|| StoreError::RangeOutOfBounds {
                    key: (*key).to_owned(),
                    range: range.describe(),
                    len: value.len() as u64,
                })?;
                Ok(Some(value[r].to_vec()))
            })
            .collect()
    }

    /// The size in bytes of the value under `key`, or `None` when absent.
    ///
    /// Partial shard reads ask for the size before fetching ranges, so a backend must answer this
    /// without reading the value; the default (which reads it) is only a fallback.
    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        Ok(self.get(key)?.map(|v| v.len() as u64))
    }

    /// Call `read` with the value under `key`; `false`, without calling it, when the key is
    /// absent. A database lends the value where its engine holds it (LMDB's map, a redb page)
    /// instead of copying it out, so a chunk is decoded straight from there; the default reads
    /// it with [`ReadableStore::get`].
    fn with_value(&self, key: &str, read: &mut dyn FnMut(&[u8])) -> Result<bool, StoreError> {
        let Some(value) = self.get(key)? else { return Ok(false) };
        read(&value);
        Ok(true)
    }

    /// [`ReadableStore::with_value`] for a value of at most `limit` bytes: the value's length,
    /// or `None` when the key is absent; `read` is called, and the value read, only when the
    /// length is within `limit`. A reader that refuses values longer than it can use (a chunk
    /// longer than its codecs produce) asks once instead of asking for the size first; the
    /// default does ask for the size first.
    fn with_value_within(&self, key: &str, limit: u64, read: &mut dyn FnMut(&[u8])) -> Result<Option<u64>, StoreError> {
        let size = self.size(key)?;
        lend_after_size(size, limit, |read| self.with_value(key, read), read)
    }

    /// The values of several keys (`None` for an absent one), in the order asked. A store whose
    /// requests wait on a network (object storage) runs them concurrently; the default reads one
    /// after another.
    fn get_many(&self, keys: &[&str]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        keys.iter().map(|key| self.get(key)).collect()
    }
}

/// Changing values.
pub trait WritableStore: Send + Sync {
    /// Store `value` under `key`, replacing any previous value. Readers see the old or the new
    /// value, never a mix.
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError>;

    /// [`WritableStore::set`] for a value the caller no longer needs: stores that keep values in
    /// memory (a transaction's buffer) take it without copying.
    fn set_owned(&self, key: &str, value: Vec<u8>) -> Result<(), StoreError> {
        self.set(key, &value)
    }

    /// Overwrite bytes of existing values at the given offsets (spec `set_partial_values`).
    fn set_partial_values(&self, writes: &[(&str, u64, &[u8])]) -> Result<(), StoreError>;

    /// Remove `key`; removing an absent key is not an error.
    fn erase(&self, key: &str) -> Result<(), StoreError>;

    /// Store several values, each as [`WritableStore::set_owned`] does; not atomic across keys
    /// unless the store's transactions make it so. A store whose requests wait on a network
    /// runs them concurrently; the default writes one after another.
    fn set_many(&self, values: Vec<(String, Vec<u8>)>) -> Result<(), StoreError> {
        values.into_iter().try_for_each(|(key, value)| self.set_owned(&key, value))
    }

    /// Remove several keys.
    fn erase_values(&self, keys: &[&str]) -> Result<(), StoreError> {
        keys.iter().try_for_each(|key| self.erase(key))
    }

    /// Remove every key starting with `prefix`.
    fn erase_prefix(&self, prefix: &str) -> Result<(), StoreError>;
}

/// Listing keys. Results are sorted bytewise.
pub trait ListableStore: Send + Sync {
    /// Every key.
    fn list(&self) -> Result<Vec<String>, StoreError> {
        self.list_prefix("")
    }

    /// Every key starting with `prefix`.
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError>;

    /// The keys and child prefixes directly under `prefix`, which is `""` or ends with `/`.
    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError>;
}

/// A complete store: readable, writable and listable, with its capabilities.
///
/// ```
/// use zarrdb::{MemoryStore, Store};
/// use zarrdb::store::{ReadableStore, WritableStore};
/// let store = MemoryStore::new();
/// store.set("a/zarr.json", b"{}").unwrap();
/// assert_eq!(store.get("a/zarr.json").unwrap().as_deref(), Some(&b"{}"[..]));
/// assert!(store.capabilities().writable);
/// ```
pub trait Store: ReadableStore + WritableStore + ListableStore {
    /// What this store supports.
    fn capabilities(&self) -> StoreCapabilities;

    /// A short name of the backend, for messages (`"memory"`, `"directory"`...).
    fn kind(&self) -> &'static str;

    /// Every key starting with `prefix` and the size of its value, sorted by key. Object storage
    /// lists sizes with the keys; the default asks for each size.
    fn list_prefix_sized(&self, prefix: &str) -> Result<Vec<(String, u64)>, StoreError> {
        let mut sized = Vec::new();
        for key in self.list_prefix(prefix)? {
            // A key erased between listing and sizing is left out, as if listed a moment later.
            if let Some(size) = self.size(&key)? {
                sized.push((key, size));
            }
        }
        Ok(sized)
    }

    /// Group the next several operations into one atomic step, where this store can.
    ///
    /// This and the methods below are zarrdb's hooks into a store's transactions: they take a
    /// [`Sealed`] token that only zarrdb can make, so only zarrdb calls them. A store of your own
    /// keeps their defaults; a store that wraps another forwards each to the wrapped store with
    /// the token it was given. To group reads or writes from outside, use [`read_consistently`]
    /// and [`write_atomically`].
    ///
    /// A database store in auto-commit mode returns a write transaction (`write`) or a read
    /// snapshot; array and group operations that touch several keys (a region write, a node
    /// creation) run inside it, so they commit as one. Stores that are already a transaction, or
    /// that cannot group writes (memory, directory), return `None` and the operation runs directly.
    fn begin_scope(&self, write: bool, _sealed: Sealed) -> Result<Option<Box<dyn StoreScope>>, crate::Error> {
        let _ = write;
        Ok(None)
    }

    /// Like `begin_scope(true)`, for an operation that only reads and writes chunks (a region
    /// write). A database in auto-commit mode returns a scope that takes the writer lock only to
    /// commit, so encoding runs in parallel with other writers; its commit validates the chunks
    /// read (see [`Store::defer_chunk_check`]), and the operation runs again when one changed.
    fn begin_data_scope(&self, sealed: Sealed) -> Result<Option<Box<dyn StoreScope>>, crate::Error> {
        self.begin_scope(true, sealed)
    }

    /// Take over the check that chunk `key` is still at `version` (its version in
    /// [`Store::chunk_versions`] when it was read for a read-modify-write): `true` when this store checks it
    /// at its commit instead. Stores that apply writes at once return `false`, and the write is
    /// checked and applied under the chunk's lock.
    fn defer_chunk_check(&self, key: &str, version: u64, _sealed: Sealed) -> bool {
        let _ = (key, version);
        false
    }

    /// The chunk versions that read-modify-writes of this store's chunks check and that its
    /// commits bump (under [`Synchronizer::Threads`](crate::Synchronizer), the default): a
    /// database's or a store folder's own table, shared by every handle of the process on that
    /// file or folder. A store that wraps another must return the wrapped store's table, or
    /// writers through the wrapper and writers of the wrapped store would not see each other's
    /// writes. The default is one table shared by every store that keeps the default.
    fn chunk_versions(&self, _sealed: Sealed) -> &ChunkVersions {
        ChunkVersions::process_wide()
    }

    /// Whether this store bumps the chunk versions of the keys it wrote when it
    /// commits (a database's auto-commit data scope). A write buffered there must not bump them
    /// itself: the bump would come before the data is visible, and it would fail this same
    /// scope's checks of other chunks sharing the counter, at every retry.
    fn bumps_chunk_versions_at_commit(&self, _sealed: Sealed) -> bool {
        false
    }

    /// Begin a large write streamed into one atomic commit (a region write storing at most
    /// `expected_bytes` of values): a database in auto-commit mode returns one engine write
    /// transaction that takes each value as soon as it is encoded, so encoding, the engine's
    /// copying and its file writes overlap, and memory holds a few values instead of the whole
    /// write. Other stores return `None`, and the write runs as it would otherwise.
    fn begin_stream(&self, expected_bytes: u64, _sealed: Sealed) -> Result<Option<Box<dyn StreamScope>>, crate::Error> {
        let _ = expected_bytes;
        Ok(None)
    }
}

/// The token of [`Store`]'s transaction hooks: only zarrdb makes one, so only zarrdb calls them,
/// and a wrapping store passes on the one it was given.
#[derive(Clone, Copy, Debug)]
pub struct Sealed(());

impl Sealed {
    pub(crate) const fn new() -> Sealed {
        Sealed(())
    }
}

/// Run `read` on one state of `store`: on an auto-commit database store, a snapshot taken for it
/// (so several reads agree with each other); on any other store, the store itself.
///
/// ```
/// use zarrdb::Database;
/// use zarrdb::store::read_consistently;
/// let dir = tempfile::tempdir().unwrap();
/// let db = Database::create(dir.path().join("db.zarrdb"))?;
/// db.store().set("a/zarr.json", b"{}")?;
/// let (size, value) = read_consistently(db.store().as_ref(), |view| Ok((view.size("a/zarr.json")?, view.get("a/zarr.json")?)))?;
/// assert_eq!(size, Some(2));
/// # Ok::<(), zarrdb::Error>(())
/// ```
pub fn read_consistently<T>(
    store: &dyn Store,
    read: impl FnOnce(&dyn Store) -> Result<T, crate::Error>,
) -> Result<T, crate::Error> {
    let scope = store.begin_scope(false, Sealed::new())?;
    let view = scope.as_ref().map(|s| s.store());
    let result = read(view.as_deref().unwrap_or(store))?;
    if let Some(scope) = scope {
        scope.finish()?;
    }
    Ok(result)
}

/// Run `write` so that its writes commit as one atomic step where `store` can: on an
/// auto-commit database store, one commit (shared, under group commit, with other threads'
/// region writes that finish at the same time); on any other store, directly. If the commit
/// fails, nothing of `write` is kept and its error is returned.
///
/// ```
/// use zarrdb::Database;
/// use zarrdb::store::write_atomically;
/// let dir = tempfile::tempdir().unwrap();
/// let db = Database::create(dir.path().join("db.zarrdb"))?;
/// write_atomically(db.store().as_ref(), |target| {
///     target.set("a/c/0", b"x")?;
///     target.set("a/c/1", b"y")?;
///     Ok(())
/// })?;
/// assert_eq!(db.store().get("a/c/1")?.as_deref(), Some(&b"y"[..]));
/// # Ok::<(), zarrdb::Error>(())
/// ```
pub fn write_atomically<T>(
    store: &dyn Store,
    write: impl FnOnce(&dyn Store) -> Result<T, crate::Error>,
) -> Result<T, crate::Error> {
    match store.begin_data_scope(Sealed::new())? {
        Some(scope) => {
            let result = write(scope.store().as_ref())?;
            scope.finish()?;
            Ok(result)
        }
        None => write(store),
    }
}

/// A streamed write opened by [`Store::begin_stream`]: nothing is visible until
/// [`StreamScope::finish`], and dropping it unfinished discards everything.
pub trait StreamScope {
    /// The store as it was when the stream began, for what the write reads (chunks it patches).
    /// It stays the latest state: the stream excludes every other writer.
    fn before(&self) -> Arc<dyn Store>;

    /// Store each value under its key (a batch: one engine call for many small values).
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), crate::Error>;

    /// Erase `key` (nothing happens when it is absent).
    fn erase(&mut self, key: &str) -> Result<(), crate::Error>;

    /// Commit everything as one durable commit.
    fn finish(self: Box<Self>) -> Result<(), crate::Error>;
}

/// An atomic unit opened by [`Store::begin_scope`]: operations go to [`StoreScope::store`], and
/// [`StoreScope::finish`] commits them. Dropping it unfinished discards them.
pub trait StoreScope {
    /// The store to run the grouped operations on.
    fn store(&self) -> Arc<dyn Store>;

    /// Commit (or, for a read scope, release) the unit.
    fn finish(self: Box<Self>) -> Result<(), crate::Error>;

    /// Commit, or return `false` without committing when a chunk read for a read-modify-write
    /// changed since (the caller runs the operation again).
    fn finish_checked(self: Box<Self>) -> Result<bool, crate::Error> {
        self.finish().map(|()| true)
    }
}

fn check_prefix(prefix: &str) -> Result<(), StoreError> {
    if prefix.is_empty() || prefix.ends_with('/') {
        Ok(())
    } else {
        Err(StoreError::InvalidKey {
            key: prefix.to_owned(),
            reason: "a list_dir prefix must be empty or end with '/'",
        })
    }
}

/// The keys of a sorted map that start with `prefix`, in order: one seek, then a scan that stops
/// at the first key past the prefix.
pub(crate) fn keys_with_prefix<'a, V>(
    map: &'a std::collections::BTreeMap<String, V>,
    prefix: &'a str,
) -> impl Iterator<Item = &'a String> + 'a {
    map.range::<str, _>((std::ops::Bound::Included(prefix), std::ops::Bound::Unbounded))
        .map(|(k, _)| k)
        .take_while(move |k| k.starts_with(prefix))
}

/// `list_dir` on an ordered key set: walks children by seeking past each child's subtree instead
/// of visiting its keys, so listing costs O(children * log n), never O(keys below).
pub(crate) fn list_dir_ordered<'a, I, F>(prefix: &str, mut seek: F) -> Result<DirListing, StoreError>
where
    F: FnMut(&str) -> I,
    I: Iterator<Item = &'a str>,
{
    list_dir_seeking(prefix, |from| Ok(seek(from).next().map(str::to_owned)))
}

/// [`list_dir_ordered`] for a fallible seek that returns the first key `>= from`, if any.
pub(crate) fn list_dir_seeking<F>(prefix: &str, mut seek: F) -> Result<DirListing, StoreError>
where
    F: FnMut(&str) -> Result<Option<String>, StoreError>,
{
    check_prefix(prefix)?;
    let mut listing = DirListing::default();
    let mut from = prefix.to_owned();
    loop {
        let Some(key) = seek(&from)? else { break };
        // Each seek starts past the last answer, so a listing that does not move forward comes
        // from a damaged file and would never end.
        if key < from {
            return Err(StoreError::Damaged {
                backend: "store",
                operation: "list",
                key: prefix.to_owned(),
                what: "a seek answered with a key before its start",
            });
        }
        let Some(rest) = key.strip_prefix(prefix) else { break };
        match rest.find('/') {
            None => {
                listing.keys.push(rest.to_owned());
                // The next key strictly after this one.
                from = format!("{key}\0");
            }
            Some(slash) => {
                let child = &rest[..slash];
                listing.prefixes.push(child.to_owned());
                // '0' is the byte after '/', so this skips every key under `child/`.
                from = format!("{prefix}{child}0");
            }
        }
    }
    // Keys may sort between prefixes ("a.b" < "a/"), so the prefix list can need ordering.
    listing.prefixes.sort();
    listing.prefixes.dedup();
    Ok(listing)
}

/// `with_value_within` for a value in hand: its length, calling `read` with it only when it is
/// at most `limit` bytes long.
pub(crate) fn lend_within(value: &[u8], limit: u64, read: &mut dyn FnMut(&[u8])) -> u64 {
    let len = value.len() as u64;
    if len <= limit {
        read(value);
    }
    len
}

/// `with_value_within` from a store's `size` (already asked) and its `with_value`: two lookups,
/// for a store that cannot learn the length in the lookup that finds the value.
pub(crate) fn lend_after_size(
    size: Option<u64>,
    limit: u64,
    with_value: impl FnOnce(&mut dyn FnMut(&[u8])) -> Result<bool, StoreError>,
    read: &mut dyn FnMut(&[u8]),
) -> Result<Option<u64>, StoreError> {
    match size {
        Some(len) if len > limit => Ok(Some(len)),
        Some(_) => {
            // The value read is the one lent, even if it changed since `size` answered.
            let mut len = None;
            with_value(&mut |value| len = Some(lend_within(value, limit, &mut *read)))?;
            Ok(len)
        }
        None => Ok(None),
    }
}
