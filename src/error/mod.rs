//! Error types: one enum per operation family plus the superset [`Error`].
//!
//! Every variant names what failed (the key, node, field or codec) and why, so a message read
//! in a log is enough to find the bad input without a debugger.

use std::io;

mod compact;
mod history;
mod npy;
mod plan;
mod transfer;
mod zip;

pub use compact::CompactError;
pub use history::HistoryError;
pub use npy::NpyError;
pub use plan::PlanError;
pub use transfer::TransferError;
pub use zip::ZipError;

/// A metadata document (`zarr.json`) is malformed or uses something zarrdb does not support.
///
/// `field` is the dotted path of the offending member inside the document, e.g.
/// `chunk_grid.configuration.chunk_shape` or `fill_value`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetadataError {
    /// The bytes are not a JSON document (or not UTF-8).
    #[error("not valid JSON: {source}")]
    Json {
        /// The parser's error, with line and column.
        #[source]
        source: serde_json::Error,
    },
    /// The document is larger than zarrdb parses (`MAX_DOCUMENT_BYTES`, docs/format.md): parsing
    /// takes several times a document's size in memory, so an absurd one is refused unread.
    #[error("a document of {bytes} bytes is larger than the {limit} bytes zarrdb parses")]
    TooLarge {
        /// The document's size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// A mandatory member is absent.
    #[error("field \"{field}\" is missing")]
    MissingField {
        /// Dotted path of the missing member.
        field: String,
    },
    /// A member has the wrong JSON type.
    #[error("field \"{field}\": expected {expected}, found {found}")]
    WrongType {
        /// Dotted path of the member.
        field: String,
        /// What the spec demands.
        expected: &'static str,
        /// A short rendering of what was found.
        found: String,
    },
    /// A member has the right type but a value the spec forbids.
    #[error("field \"{field}\": {reason}")]
    InvalidValue {
        /// Dotted path of the member.
        field: String,
        /// Why the value is refused.
        reason: String,
    },
    /// A member the spec does not define, without `"must_understand": false`.
    #[error("field \"{field}\" is not part of Zarr v3 metadata and is not marked \"must_understand\": false")]
    UnknownField {
        /// Name of the member.
        field: String,
    },
    /// An extension (data type, chunk grid, key encoding, storage transformer) that zarrdb does not
    /// implement; the spec requires refusing to open such a node.
    #[error("field \"{field}\": unsupported {kind} \"{name}\"")]
    Unsupported {
        /// Dotted path of the member.
        field: String,
        /// Which extension point: "data type", "chunk grid", ...
        kind: &'static str,
        /// The extension's name.
        name: String,
    },
}

/// A store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The operating system refused an I/O operation on `key`.
    #[error("{operation} of key \"{key}\" failed: {source}")]
    Io {
        /// The store operation (`get`, `set`, ...).
        operation: &'static str,
        /// The key involved (or prefix for listings).
        key: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The key cannot be stored safely (empty segment, `..`, backslash, NUL, absolute path...).
    #[error("invalid store key \"{key}\": {reason}")]
    InvalidKey {
        /// The refused key, escaped for display.
        key: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// A directory store key whose path passes through a symbolic link: a linked folder, or a
    /// link to something other than a file inside the store's folder. Following it could read,
    /// write or delete outside the store.
    #[error("key \"{key}\": \"{link}\" is a symbolic link {reason}; a directory store does not follow it")]
    Symlink {
        /// The key.
        key: String,
        /// The link on the key's path.
        link: String,
        /// What makes it unsafe to follow.
        reason: &'static str,
    },
    /// The store does not support this operation (see its capabilities).
    #[error("store \"{store}\" does not support {operation}")]
    Unsupported {
        /// The store kind.
        store: &'static str,
        /// The refused operation.
        operation: &'static str,
    },
    /// A partial write or read names a byte range that does not fit the value.
    #[error("byte range {range} is outside value \"{key}\" of {len} bytes")]
    RangeOutOfBounds {
        /// The key read or written.
        key: String,
        /// The requested range.
        range: String,
        /// The value's length.
        len: u64,
    },
    /// The embedded database engine (redb, LMDB, sled) reported an error.
    #[error("{backend} {operation} of \"{key}\" failed: {source}")]
    Engine {
        /// The backend.
        backend: &'static str,
        /// The operation (`get`, `commit`, ...).
        operation: &'static str,
        /// The key involved (or prefix, or `""` for whole-database operations).
        key: String,
        /// The engine's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A commit failed because the disk holding the database is full. Nothing of the commit
    /// was applied; the database holds every commit acknowledged before it.
    #[error("{backend} {operation} failed: the disk holding \"{path}\" is full ({available} bytes free): {source}")]
    DiskFull {
        /// The backend.
        backend: &'static str,
        /// The operation (`commit`).
        operation: &'static str,
        /// The database's path.
        path: String,
        /// The bytes the file system had free for this process after the failure.
        available: u64,
        /// The engine's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The store answered as only a damaged file can: a listing that goes backwards, a value
    /// that lies outside the file.
    #[error("{backend} {operation} of \"{key}\": the file is damaged: {what}")]
    Damaged {
        /// The backend.
        backend: &'static str,
        /// The operation (`get`, `list`, ...).
        operation: &'static str,
        /// The key involved (or prefix).
        key: String,
        /// What the store did that a sound file cannot.
        what: &'static str,
    },
    /// Another writer moved the head of a bucket database (`zarrdb+s3://`) after this commit
    /// read it, so nothing of this commit was applied. The transaction layer commits again when
    /// what the commit read is unchanged; it reaches callers only after its retries ran out.
    #[error("another writer committed to {database} first; nothing of this commit was applied")]
    HeadMoved {
        /// The database's locator.
        database: String,
    },
    /// A value of an older version of a database with history was freed by a collection after
    /// the version expired (an engine whose snapshots follow the live file: sled); the version
    /// can no longer be read.
    #[error("\"{key}\" of a version that has expired and was collected since it was opened")]
    VersionExpired {
        /// The key read.
        key: String,
    },
    /// The branch a store commits to and reads the head of no longer exists (it was deleted).
    #[error("the branch \"{branch}\" this store is on no longer exists")]
    BranchMissing {
        /// The branch.
        branch: String,
    },
    /// The transaction this store belongs to was committed or dropped; handles made from it
    /// (arrays, groups) cannot be used any more.
    #[error("{operation} of \"{key}\": the transaction has ended (committed or dropped)")]
    TransactionEnded {
        /// The refused operation.
        operation: &'static str,
        /// The key involved.
        key: String,
    },
    /// The store could not be opened at this location.
    #[error("cannot open store at \"{location}\": {reason}")]
    Open {
        /// The path or locator given.
        location: String,
        /// Why.
        reason: String,
        /// The file system's error, where there was one.
        #[source]
        source: Option<io::Error>,
    },
}

/// Encoding or decoding a chunk failed, or a codec chain is invalid.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// No codec of this name is implemented.
    #[error("unknown codec \"{name}\"")]
    UnknownCodec {
        /// The codec name as written in the metadata.
        name: String,
    },
    /// A known numcodecs codec that zarrdb cannot run: the array's chunks are kept as they are,
    /// but no value can be encoded or decoded.
    #[error("codec \"{name}\" is known but zarrdb cannot run it: chunks using it are kept as stored, their values cannot be read or written")]
    Unavailable {
        /// The codec name as written in the metadata.
        name: String,
    },
    /// The codec's configuration is missing a member or holds a bad value.
    #[error("codec \"{codec}\": field \"{field}\": {reason}")]
    InvalidConfiguration {
        /// The codec name.
        codec: String,
        /// The configuration member.
        field: String,
        /// Why it is refused.
        reason: String,
    },
    /// The chain as a whole breaks the spec's rules (e.g. no array->bytes codec).
    #[error("invalid codec chain: {reason}")]
    InvalidChain {
        /// Why.
        reason: String,
    },
    /// A checksum stored with the data does not match it.
    #[error("codec \"{codec}\": checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    ChecksumMismatch {
        /// The checksum codec.
        codec: &'static str,
        /// The checksum found in the data.
        stored: u32,
        /// The checksum of the data.
        computed: u32,
    },
    /// The encoded bytes are not a valid stream or structure for this codec.
    #[error("codec \"{codec}\": corrupt data: {reason}")]
    Corrupt {
        /// The codec.
        codec: &'static str,
        /// What is wrong.
        reason: String,
        /// The codec library's own error, where it found the damage.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// Decoding would produce more bytes than any valid chunk can hold (a decompression bomb or
    /// a corrupted stream); decoding stops at the limit.
    #[error("codec \"{codec}\": decoded data exceeds the limit of {limit} bytes")]
    TooLarge {
        /// The codec.
        codec: &'static str,
        /// The limit in bytes.
        limit: u64,
    },
    /// A decoded chunk would be larger than zarrdb holds in memory (`MAX_CHUNK_BYTES`, 4 GiB):
    /// the array's metadata declares chunks too large to encode or decode.
    #[error("chunks of {bytes} bytes are larger than the {limit} bytes zarrdb holds in memory")]
    ChunkTooLarge {
        /// The decoded chunk size the metadata declares.
        bytes: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// A stored chunk value is longer than the array's codecs can produce for one chunk: it is
    /// refused before it is read, so its size costs no memory.
    #[error("a stored value of {stored} bytes is longer than the {limit} bytes a chunk of this array encodes to")]
    StoredTooLarge {
        /// The stored value's length.
        stored: u64,
        /// The most a chunk of the array can take encoded.
        limit: u64,
    },
    /// Encoding failed inside a codec library.
    #[error("codec \"{codec}\": encoding failed: {reason}")]
    Encode {
        /// The codec.
        codec: &'static str,
        /// The library's reason.
        reason: String,
        /// The codec library's own error, where it gave one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// A stored chunk does not decode to the size its metadata promises.
    #[error("codec \"{codec}\": decoded {actual} bytes, expected {expected}")]
    SizeMismatch {
        /// The codec that produced the wrong size.
        codec: &'static str,
        /// Bytes expected from the metadata.
        expected: u64,
        /// Bytes actually produced.
        actual: u64,
    },
}

/// A region read or write was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArrayError {
    /// The region's rank differs from the array's.
    #[error("array \"{array}\": region has {given} dimensions, the array has {expected}")]
    RankMismatch {
        /// Node path of the array.
        array: String,
        /// The array's rank.
        expected: usize,
        /// The region's rank.
        given: usize,
    },
    /// The region reaches past the array's shape.
    #[error("array \"{array}\": region {region} is outside shape {shape:?}")]
    OutOfBounds {
        /// Node path of the array.
        array: String,
        /// The region, rendered as `[start..end, ...]`.
        region: String,
        /// The array's shape.
        shape: Vec<u64>,
    },
    /// The caller's buffer does not hold exactly the region's elements.
    #[error("array \"{array}\": buffer holds {given} bytes, the region needs {expected}")]
    BufferLength {
        /// Node path of the array.
        array: String,
        /// Bytes the region needs.
        expected: u64,
        /// Bytes given.
        given: u64,
    },
    /// The Rust element type does not match the array's data type.
    #[error("array \"{array}\": data type is {data_type}, not {requested}")]
    ElementType {
        /// Node path of the array.
        array: String,
        /// The array's data type.
        data_type: String,
        /// The data type of the Rust element type used.
        requested: &'static str,
    },
    /// An appended block differs from the array in a dimension other than the axis, or the
    /// axis is out of range.
    #[error("array \"{array}\": cannot append a block of shape {given:?} along axis {axis} to shape {array_shape:?}: other dimensions must match")]
    AppendShape {
        /// The array path.
        array: String,
        /// The axis appended along.
        axis: usize,
        /// The array's shape.
        array_shape: Vec<u64>,
        /// The appended block's shape.
        given: Vec<u64>,
    },
    /// An operation that has no path for rectilinear chunk grids yet was used on an array with
    /// one (docs/format.md, "Chunk grids").
    #[error("array \"{array}\": {operation} is not supported on a rectilinear chunk grid")]
    RectilinearUnsupported {
        /// Node path of the array.
        array: String,
        /// What was refused.
        operation: &'static str,
    },
    /// A byte-level region API was used on a variable-length array, whose elements have no
    /// fixed size: use [`crate::Array::read_items`] / [`crate::Array::write_items`].
    #[error("array \"{array}\": the data type {data_type} has variable-length elements; read and write them as items")]
    VariableLength {
        /// Node path of the array.
        array: String,
        /// The array's data type.
        data_type: String,
    },
    /// The caller gave another number of items than the region holds.
    #[error("array \"{array}\": {given} items given, the region holds {expected}")]
    ItemCount {
        /// Node path of the array.
        array: String,
        /// Elements in the region.
        expected: u64,
        /// Items given.
        given: u64,
    },
    /// An item does not fit the array's fixed element size.
    #[error("array \"{array}\": item {index} needs {needed} bytes, an element of {data_type} holds {capacity}")]
    ItemTooLong {
        /// Node path of the array.
        array: String,
        /// Position of the item in the caller's values.
        index: usize,
        /// Bytes the item needs in the element.
        needed: usize,
        /// Bytes one element holds.
        capacity: usize,
        /// The array's data type.
        data_type: String,
    },
    /// A stored element is not a valid item of the requested kind (e.g. UTF-32 with a code point
    /// that is no character).
    #[error("array \"{array}\": element {index} of the region is not valid text: {reason}")]
    InvalidItem {
        /// Node path of the array.
        array: String,
        /// Position of the element in the region, C order.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// The region's size in bytes does not fit in memory addressing.
    #[error("array \"{array}\": region of {elements} elements is too large to hold in memory")]
    TooLarge {
        /// Node path of the array.
        array: String,
        /// Number of elements requested.
        elements: u128,
    },
}

/// A node path or the hierarchy around it is wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NodeError {
    /// The path breaks the spec's naming rules.
    #[error("invalid node path \"{path}\": {reason}")]
    InvalidPath {
        /// The path given.
        path: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// Nothing exists at the path (no zarr.json and no descendants).
    #[error("no node at \"{path}\"")]
    NotFound {
        /// The path.
        path: String,
    },
    /// A node already exists at the path.
    #[error("a node already exists at \"{path}\"")]
    AlreadyExists {
        /// The path.
        path: String,
    },
    /// The node exists but is of the other kind.
    #[error("node \"{path}\" is {}, not {}", with_article(found), with_article(expected))]
    WrongKind {
        /// The path.
        path: String,
        /// "array" or "group".
        expected: &'static str,
        /// What it is.
        found: &'static str,
    },
    /// A node cannot be created under an array.
    #[error("cannot create \"{path}\": ancestor \"{array}\" is an array")]
    ParentIsArray {
        /// The path to create.
        path: String,
        /// The ancestor array.
        array: String,
    },
    /// A move whose source or target is the root, or whose target lies inside its source.
    #[error("cannot move \"{from}\" to \"{to}\": the root cannot move, and a node cannot move into itself")]
    InvalidMove {
        /// The node to move.
        from: String,
        /// The requested new path.
        to: String,
    },
}

/// Opening a database failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Nothing exists at the path and the caller asked to open, not create.
    #[error("no database at \"{path}\"")]
    NotFound {
        /// The path given.
        path: String,
    },
    /// The path holds a database of another backend, or something that is not a database.
    #[error("cannot open \"{path}\" as {requested}: it holds {found}")]
    WrongBackend {
        /// The path given.
        path: String,
        /// The backend asked for.
        requested: &'static str,
        /// What the file or folder holds: `"a redb database"`, `"an LMDB database"`,
        /// `"a sled database"`, `"a directory"`, `"a zip archive"`, `"an SQLite database (...)"`,
        /// `"an HDF5 file (...)"`, a netCDF, gzip, zstd or Parquet file, `"an unknown file"`.
        found: &'static str,
    },
    /// Another handle or process holds the database open exclusively.
    #[error("\"{path}\" is locked: another handle or process has this {backend} database open")]
    Locked {
        /// The path given.
        path: String,
        /// The backend.
        backend: &'static str,
    },
    /// The file is damaged or not a database of this backend.
    #[error("\"{path}\" is not a readable {backend} database: {source}")]
    Corrupted {
        /// The path given.
        path: String,
        /// The backend.
        backend: &'static str,
        /// The engine's diagnosis.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The database's format record (`__zarrdb/format`) is no record this build understands.
    #[error("\"{path}\" holds an unknown zarrdb format record {found}; this build reads formats up to {supported}")]
    FormatVersion {
        /// The path given.
        path: String,
        /// The record found (escaped, at most 80 characters).
        found: String,
        /// The newest format this build reads, the one it writes.
        supported: u32,
    },
    /// The database was written by a newer zarrdb, in a format this build does not read
    /// (docs/format.md, "Formats").
    #[error(
        "cannot open \"{path}\": written by zarrdb {written_by}, format {found}; this build reads up to {supported}"
    )]
    NewerFormat {
        /// The path given.
        path: String,
        /// The format number the database holds.
        found: u32,
        /// The newest format this build reads, the one it writes.
        supported: u32,
        /// The version of the zarrdb that wrote the format record (escaped, at most 40
        /// characters), or `(version not recorded)`.
        written_by: String,
    },
    /// The engine's own file format is newer than this build's engine reads: the file was written
    /// by a newer zarrdb (or a newer version of the engine).
    #[error(
        "cannot open \"{path}\": written by a newer zarrdb (or a newer {backend}): {backend} file format {found}; this build reads up to {supported}"
    )]
    NewerEngineFormat {
        /// The path given.
        path: String,
        /// The backend.
        backend: &'static str,
        /// The engine file format found.
        found: u32,
        /// The newest engine file format this build reads.
        supported: u32,
    },
    /// The path is neither a regular file nor a folder (a FIFO, a socket, a device): refused at
    /// once, since opening a FIFO would wait for a writer for ever.
    #[error("cannot open \"{path}\": it is {found}, not a database file or folder")]
    NotFileOrFolder {
        /// The path given.
        path: String,
        /// What it is: `"a FIFO (named pipe)"`, `"a socket"`, `"a character device"`,
        /// `"a block device"`.
        found: &'static str,
    },
    /// The operating system refused to create or open the path.
    #[error("cannot open \"{path}\": {source}")]
    Io {
        /// The path given.
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The engine failed while opening for another reason.
    #[error("cannot open {backend} database \"{path}\": {source}")]
    Engine {
        /// The path given.
        path: String,
        /// The backend.
        backend: &'static str,
        /// The engine's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Beginning or finishing a transaction failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransactionError {
    /// This thread already holds the database's write transaction; waiting for another would wait
    /// for itself.
    #[error("this thread already has a write transaction open on \"{database}\"; commit or drop it first")]
    WouldDeadlock {
        /// The database path.
        database: String,
    },
    /// The database is read-only for this kind of handle (a snapshot).
    #[error("{operation} is not possible in a read snapshot")]
    ReadOnly {
        /// The refused operation.
        operation: &'static str,
    },
    /// A key read for a read-modify-write was stored by another writer before this unit
    /// committed, so nothing was committed. Region writes run again on their own when this
    /// happens; it reaches callers through [`crate::store::StoreScope::finish`], and through
    /// [`crate::Transaction::commit`] on a bucket database (`zarrdb+s3://`), whose transactions do
    /// not exclude other writers: there a key (or listed prefix) the transaction read was changed
    /// by a commit that won the race, and running the transaction again is the remedy.
    #[error("{key} changed since it was read; nothing was committed")]
    Conflict {
        /// The first key (a chunk, a document, or a listed prefix) whose read changed.
        key: String,
    },
}

/// Any zarrdb error. Each variant carries the family error and, where it helps, where it happened.
///
/// ```
/// use std::sync::Arc;
/// use zarrdb::error::{ArrayError, NodeError};
/// use zarrdb::{Array, ArrayMetadata, DataType, Error, MemoryStore, Store};
/// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
/// assert!(matches!(Array::open(store.clone(), "/missing"), Err(Error::Node(NodeError::NotFound { .. }))));
/// let a = Array::create(store, "/a", ArrayMetadata::new(DataType::UInt8, vec![4], vec![2]))?;
/// let err = a.write_region::<u8>(&[3], &[2], &[1, 2]).unwrap_err();
/// assert!(matches!(err, Error::Array(ArrayError::OutOfBounds { .. })), "{err}");
/// # Ok::<(), zarrdb::Error>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A metadata document is invalid.
    #[error("invalid metadata in {key}: {source}")]
    Metadata {
        /// Store key of the document.
        key: String,
        /// What is wrong.
        #[source]
        source: MetadataError,
    },
    /// A store operation failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A codec failed on a chunk, or the array's codec chain is invalid.
    #[error("{key}: {source}")]
    Codec {
        /// The chunk key, or the metadata key for chain errors.
        key: String,
        /// What is wrong.
        #[source]
        source: CodecError,
    },
    /// A region request was refused.
    #[error(transparent)]
    Array(#[from] ArrayError),
    /// A path or hierarchy error.
    #[error(transparent)]
    Node(#[from] NodeError),
    /// A database could not be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// A transaction could not begin or end.
    #[error(transparent)]
    Transaction(#[from] TransactionError),
    /// An import, export or copy failed.
    #[error(transparent)]
    Transfer(#[from] TransferError),
    /// A compaction failed; the database is unchanged in content.
    #[error(transparent)]
    Compact(#[from] CompactError),
    /// An operation on the history of a database failed.
    #[error(transparent)]
    History(#[from] HistoryError),
}

impl From<NpyError> for Error {
    fn from(err: NpyError) -> Error {
        Error::Transfer(err.into())
    }
}

/// "an array", "a group".
fn with_article(kind: &str) -> String {
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    format!("{article} {kind}")
}
