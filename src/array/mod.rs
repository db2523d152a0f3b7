//! Array handles: metadata, chunk keys and region I/O.

mod check;
mod chunk_sync;
mod element;
mod io;
mod items;
#[cfg(feature = "ndarray")]
mod ndarray;
mod output;
mod rectilinear;
mod resize;
mod scatter;
mod stream;

use crate::store::Sealed;
use std::sync::Arc;

use serde_json::{Map, Value};

pub use check::CheckReport;
pub use chunk_sync::Synchronizer;
pub use element::{Element, Time};
pub use items::Item;
pub use scatter::ChunkElements;

use crate::codec::{ChunkSpec, CodecChain};
use crate::error::Error;
use crate::key::path::NodePath;
use crate::metadata::{ArrayMetadata, DataType, FillValue};
use crate::store::Store;

/// A handle on an array in a store. Cheap to clone; clones share the store.
///
/// ```
/// use zarrdb::{Array, ArrayMetadata, DataType, Database};
/// let dir = tempfile::tempdir().unwrap();
/// let db = Database::create(dir.path().join("run.zarrdb"))?;
/// let meta = ArrayMetadata::new(DataType::Int32, vec![100, 100], vec![10, 10]);
/// let mut counts = Array::create(db.store(), "/counts", meta)?;
/// counts.write_region(&[5, 5], &[1, 3], &[1, 2, 3])?; // one atomic commit
/// counts.resize(&[200, 100])?;
/// let again = Array::open(db.store(), "/counts")?;
/// assert_eq!(again.shape(), [200, 100]);
/// assert_eq!(again.read_region::<i32>(&[5, 4], &[1, 5])?, [0, 1, 2, 3, 0]);
/// # Ok::<(), zarrdb::Error>(())
/// ```
#[derive(Clone)]
pub struct Array {
    store: Arc<dyn Store>,
    path: NodePath,
    metadata: ArrayMetadata,
    chain: Arc<CodecChain>,
    /// The key prefix of the array (`a/b/`), computed once.
    prefix: String,
    /// How partial chunk writes guard against concurrent writers (behind an `Arc`: handles are
    /// cloned often, and a lock folder's path would make every handle larger).
    synchronizer: Arc<Synchronizer>,
}

impl std::fmt::Debug for Array {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Array")
            .field("path", &self.path)
            .field("shape", &self.metadata.shape)
            .field("data_type", &self.metadata.data_type)
            .finish()
    }
}

impl Array {
    /// A handle on an array whose metadata has been read and validated.
    pub(crate) fn from_metadata(
        store: Arc<dyn Store>,
        path: NodePath,
        metadata: ArrayMetadata,
    ) -> Result<Array, Error> {
        let chain = codec_chain(&metadata).map_err(|source| Error::Codec { key: path.metadata_key(), source })?;
        let prefix = path.key_prefix();
        Ok(Array { store, path, metadata, chain: Arc::new(chain), prefix, synchronizer: Arc::default() })
    }

    /// Whether this array's chunks can be encoded and decoded here: `CodecError::Unavailable`
    /// for a codec zarrdb recognises but cannot run, `CodecError::ChunkTooLarge` for chunks
    /// above 4 GiB decoded. Such an array still opens (its metadata, stored
    /// chunk keys and raw bytes can be read and copied).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore};
    /// let a = Array::create(Arc::new(MemoryStore::new()), "/a", ArrayMetadata::new(DataType::Int8, vec![4], vec![2]))?;
    /// assert!(a.check_codecs().is_ok());
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn check_codecs(&self) -> Result<(), Error> {
        self.chain.check_runnable().map_err(|source| Error::Codec { key: self.path.metadata_key(), source })
    }

    /// The array's path.
    pub fn path(&self) -> &NodePath {
        &self.path
    }

    /// The array's metadata.
    pub fn metadata(&self) -> &ArrayMetadata {
        &self.metadata
    }

    /// Length of each dimension.
    pub fn shape(&self) -> &[u64] {
        &self.metadata.shape
    }

    /// Chunk length of each dimension (for a rectilinear chunk grid the largest edge of each;
    /// [`ArrayMetadata::chunk`] gives one chunk's place and shape).
    pub fn chunk_shape(&self) -> &[u64] {
        &self.metadata.chunk_shape
    }

    /// Element type.
    pub fn data_type(&self) -> DataType {
        self.metadata.data_type.clone()
    }

    /// Value of unwritten elements.
    pub fn fill_value(&self) -> &FillValue {
        &self.metadata.fill_value
    }

    /// User attributes.
    pub fn attributes(&self) -> &Map<String, Value> {
        &self.metadata.attributes
    }

    /// Replace the user attributes (rewrites `zarr.json`).
    pub fn set_attributes(&mut self, attributes: Map<String, Value>) -> Result<(), Error> {
        let mut meta = self.metadata.clone();
        meta.attributes = attributes;
        self.store.set(&self.path.metadata_key(), &meta.to_json_bytes())?;
        self.metadata = meta;
        Ok(())
    }

    /// The store key of the chunk at grid coordinates `coords`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// let a = Array::create(store, "/x", ArrayMetadata::new(DataType::Int16, vec![8, 8], vec![4, 4])).unwrap();
    /// assert_eq!(a.chunk_key(&[1, 0]), "x/c/1/0");
    /// ```
    pub fn chunk_key(&self, coords: &[u64]) -> String {
        format!("{}{}", self.prefix, self.metadata.chunk_key_encoding.encode(coords))
    }

    /// The store the array lives in.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The decoded representation of every chunk: edge chunks are stored at full size too.
    pub(crate) fn chunk_spec(&self) -> ChunkSpec {
        chunk_spec(&self.metadata)
    }

    /// How this handle's partial chunk writes guard against concurrent writers
    /// ([`Synchronizer::Threads`] unless changed with [`Array::with_synchronizer`]).
    pub fn synchronizer(&self) -> &Synchronizer {
        &self.synchronizer
    }

    /// This handle with another [`Synchronizer`].
    pub fn with_synchronizer(self, synchronizer: Synchronizer) -> Array {
        Array { synchronizer: Arc::new(synchronizer), ..self }
    }

    pub(crate) fn chain(&self) -> &CodecChain {
        &self.chain
    }

    /// Chunk grid coordinates of every chunk key stored for this array, and the stored size of
    /// each, found by listing (no chunk is read or decoded).
    pub fn stored_chunks(&self) -> Result<Vec<(Vec<u64>, u64)>, Error> {
        self.scoped(false, Array::stored_chunks_unscoped)
    }

    fn stored_chunks_unscoped(&self) -> Result<Vec<(Vec<u64>, u64)>, Error> {
        let mut out = Vec::new();
        for (key, coords) in self.stored_chunk_coords_unscoped()? {
            let size = self.store.size(&key)?.unwrap_or(0);
            out.push((coords, size));
        }
        Ok(out)
    }

    /// The key and grid coordinates of every chunk stored under this array (one listing of its
    /// prefix).
    pub(super) fn stored_chunk_coords_unscoped(&self) -> Result<Vec<(String, Vec<u64>)>, Error> {
        let rank = self.metadata.shape.len();
        let grid = self.metadata.grid_shape();
        let mut out = Vec::new();
        for key in self.store.list_prefix(&self.prefix)? {
            let rel = &key[self.prefix.len()..];
            let Some(coords) = self.metadata.chunk_key_encoding.decode(rel, rank) else { continue };
            if coords.iter().zip(&grid).all(|(c, g)| c < g) {
                out.push((key, coords));
            }
        }
        Ok(out)
    }
}

impl Array {
    /// Run `f` on this array inside one atomic unit of the store (see [`Store::begin_scope`]): a
    /// write transaction for writes, a snapshot for reads, when the store is a database in
    /// auto-commit mode; directly otherwise.
    pub(crate) fn scoped<R>(&self, write: bool, f: impl FnOnce(&Array) -> Result<R, Error>) -> Result<R, Error> {
        match self.store.begin_scope(write, Sealed::new())? {
            None => f(self),
            Some(scope) => {
                let inside = Array { store: scope.store(), ..self.clone() };
                let out = f(&inside)?;
                scope.finish()?;
                Ok(out)
            }
        }
    }

    /// Run the chunk writes `f` in a scope of [`Store::begin_data_scope`]: on a database in
    /// auto-commit mode they are encoded without the writer lock and validated at commit, and `f`
    /// runs again when another writer stored a chunk it read meanwhile.
    pub(crate) fn scoped_data(&self, f: impl Fn(&Array) -> Result<(), Error>) -> Result<(), Error> {
        for _ in 0..OPTIMISTIC_ATTEMPTS {
            let Some(scope) = self.store.begin_data_scope(Sealed::new())? else { return f(self) };
            let inside = Array { store: scope.store(), ..self.clone() };
            f(&inside)?;
            if scope.finish_checked()? {
                return Ok(());
            }
        }
        // Past this many refused commits, the write runs as an ordinary write transaction: under
        // the writer lock no other commit can invalidate what it read, so it always finishes, even
        // when busier writers keep winning (or a check could never pass, as one did before
        // whole-chunk stores in a data scope stopped bumping their counter early).
        self.scoped(true, |a| f(a))
    }
}

/// Optimistic attempts of one region write (`Array::scoped_data`) before it takes the writer lock.
const OPTIMISTIC_ATTEMPTS: usize = 32;

/// The codec chain of an array with this metadata: building it is also how every writer and
/// reader of a document checks that its codecs can run on its chunks.
pub(crate) fn codec_chain(metadata: &ArrayMetadata) -> Result<CodecChain, crate::error::CodecError> {
    CodecChain::from_metadata(&metadata.codecs, &chunk_spec(metadata))
}

/// The decoded representation of every chunk of an array with this metadata.
pub(crate) fn chunk_spec(metadata: &ArrayMetadata) -> ChunkSpec {
    ChunkSpec {
        shape: metadata.chunk_shape.clone(),
        data_type: metadata.data_type.clone(),
        fill_value: metadata.fill_value.clone(),
    }
}
