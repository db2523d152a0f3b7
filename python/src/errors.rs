//! The typed Python exceptions: `zarrdb.Error` and one subclass per error family of the library,
//! each carrying the library's message and, as attributes, what the library's error knows:
//! `kind` (a stable string to branch on, never the message), `key`, `node`, `path` and
//! `operation` (None where the error does not name one).

use pyo3::create_exception;
use pyo3::prelude::*;
use zarrdb::error::{
    ArrayError as LibArray, CodecError as LibCodec, CompactError as LibCompact, HistoryError as LibHistory,
    NodeError as LibNode, OpenError as LibOpen, StoreError as LibStore, TransactionError as LibTransaction,
    TransferError as LibTransfer,
};

create_exception!(zarrdb, Error, pyo3::exceptions::PyException, "Base class of every zarrdb error.");
create_exception!(zarrdb, MetadataError, Error, "A metadata document (zarr.json) is invalid.");
create_exception!(zarrdb, StoreError, Error, "A store operation failed (bad key, I/O, engine error).");
create_exception!(zarrdb, DiskFullError, StoreError, "A commit did not fit: the disk holding the database is full.");
create_exception!(zarrdb, CodecError, Error, "A codec failed on a chunk, or a codec chain is invalid.");
create_exception!(zarrdb, ArrayError, Error, "A region read or write was refused.");
create_exception!(zarrdb, NodeError, Error, "A node path or the hierarchy around it is wrong.");
create_exception!(zarrdb, OpenError, Error, "A database could not be opened.");
create_exception!(zarrdb, LockedError, OpenError, "Another process holds the database open.");
create_exception!(zarrdb, TransactionError, Error, "A transaction could not begin or end.");
create_exception!(zarrdb, TransferError, Error, "An import, export or copy failed.");
create_exception!(zarrdb, CompactError, Error, "A compaction failed or was refused; the data is unchanged.");
create_exception!(zarrdb, HistoryError, Error, "An operation on a database's history (log, tags, versions) failed.");

/// What an error names, beside its message: the attributes of the Python exception.
#[derive(Default)]
struct Context {
    /// The stable kind (docs/python.md lists them).
    kind: &'static str,
    /// The store key involved.
    key: Option<String>,
    /// The node path involved.
    node: Option<String>,
    /// The database or file path involved.
    path: Option<String>,
    /// The operation that failed (`get`, `set`, `commit`, ...).
    operation: Option<&'static str>,
}

impl Context {
    fn kind(kind: &'static str) -> Context {
        Context { kind, ..Context::default() }
    }
    fn key(mut self, key: &str) -> Context {
        // The library writes "" where an operation has no key (whole-database operations).
        self.key = (!key.is_empty()).then(|| key.to_owned());
        self
    }
    fn node(mut self, node: &str) -> Context {
        self.node = Some(node.to_owned());
        self
    }
    fn path(mut self, path: &str) -> Context {
        self.path = Some(path.to_owned());
        self
    }
    fn operation(mut self, operation: &'static str) -> Context {
        self.operation = Some(operation);
        self
    }
}

/// The exception for a library error: its family's class, with the library's message and the
/// error's context as attributes.
pub(crate) fn to_py(error: impl Into<zarrdb::Error>) -> PyErr {
    to_py_ref(&error.into())
}

/// `to_py` of an error that others share (one failed group commit, many sets).
pub(crate) fn to_py_ref(error: &zarrdb::Error) -> PyErr {
    let message = error.to_string();
    let err = match error {
        zarrdb::Error::Metadata { .. } => MetadataError::new_err(message),
        zarrdb::Error::Store(LibStore::DiskFull { .. }) => DiskFullError::new_err(message),
        zarrdb::Error::Store(_) => StoreError::new_err(message),
        zarrdb::Error::Codec { .. } => CodecError::new_err(message),
        zarrdb::Error::Array(_) => ArrayError::new_err(message),
        zarrdb::Error::Node(_) => NodeError::new_err(message),
        zarrdb::Error::Open(LibOpen::Locked { .. }) => LockedError::new_err(message),
        zarrdb::Error::Open(_) => OpenError::new_err(message),
        zarrdb::Error::Transaction(_) => TransactionError::new_err(message),
        zarrdb::Error::Transfer(_) => TransferError::new_err(message),
        zarrdb::Error::Compact(_) => CompactError::new_err(message),
        zarrdb::Error::History(_) => HistoryError::new_err(message),
        // The enum is non-exhaustive: a family added later is still a zarrdb.Error.
        _ => Error::new_err(message),
    };
    Python::attach(|py| {
        let context = context(error);
        let value = err.value(py);
        // Setting an attribute on a fresh exception instance fails only without memory; the
        // exception is still the right class with the right message then.
        let _ = value.setattr("kind", context.kind);
        let _ = value.setattr("key", context.key);
        let _ = value.setattr("node", context.node);
        let _ = value.setattr("path", context.path);
        let _ = value.setattr("operation", context.operation);
    });
    err
}

/// `zarrdb.NodeError` (kind `"changed"`) for an array that was made again with other metadata
/// since a handle on it was opened (`array.rs`): the handle no longer describes what is there.
pub(crate) fn array_changed(path: &str) -> PyErr {
    let err = NodeError::new_err(format!(
        "array {path} was made again with other metadata since it was opened: open it again"
    ));
    Python::attach(|py| {
        let value = err.value(py);
        let _ = value.setattr("kind", "changed");
        let _ = value.setattr("key", None::<String>);
        let _ = value.setattr("node", path);
        let _ = value.setattr("path", None::<String>);
        let _ = value.setattr("operation", None::<String>);
    });
    err
}

/// The attributes of `error`'s exception.
fn context(error: &zarrdb::Error) -> Context {
    match error {
        zarrdb::Error::Metadata { key, .. } => Context::kind("invalid_metadata").key(key),
        zarrdb::Error::Store(e) => store_context(e),
        zarrdb::Error::Codec { key, source } => codec_context(source).key(key),
        zarrdb::Error::Array(e) => array_context(e),
        zarrdb::Error::Node(e) => node_context(e),
        zarrdb::Error::Open(e) => open_context(e),
        zarrdb::Error::Transaction(e) => match e {
            LibTransaction::WouldDeadlock { database } => Context::kind("would_deadlock").path(database),
            LibTransaction::ReadOnly { operation } => Context::kind("read_only").operation(operation),
            LibTransaction::Conflict { key } => Context::kind("conflict").key(key),
            _ => Context::kind("transaction"),
        },
        zarrdb::Error::Transfer(e) => transfer_context(e),
        zarrdb::Error::Compact(e) => match e {
            LibCompact::InUse { database, .. } => Context::kind("in_use").path(database),
            LibCompact::ReadOnly { database } => Context::kind("read_only").path(database),
            LibCompact::Unsupported { database, .. } => Context::kind("unsupported").path(database),
            LibCompact::Engine { database, source } => {
                Context { path: Some(database.clone()), ..store_context(source) }
            }
            _ => Context::kind("compact"),
        },
        zarrdb::Error::History(e) => history_context(e),
        _ => Context::kind("other"),
    }
}

fn store_context(error: &LibStore) -> Context {
    match error {
        LibStore::Io { operation, key, .. } => Context::kind("io").key(key).operation(operation),
        LibStore::InvalidKey { key, .. } => Context::kind("invalid_key").key(key),
        LibStore::Symlink { key, .. } => Context::kind("invalid_key").key(key),
        LibStore::Unsupported { operation, .. } => Context::kind("unsupported").operation(operation),
        LibStore::RangeOutOfBounds { key, .. } => Context::kind("out_of_range").key(key),
        LibStore::Engine { operation, key, .. } => Context::kind("engine").key(key).operation(operation),
        LibStore::DiskFull { operation, path, .. } => Context::kind("disk_full").path(path).operation(operation),
        LibStore::Damaged { operation, key, .. } => Context::kind("damaged").key(key).operation(operation),
        LibStore::TransactionEnded { operation, key } => {
            Context::kind("transaction_closed").key(key).operation(operation)
        }
        LibStore::Open { location, .. } => Context::kind("io").path(location).operation("open"),
        LibStore::VersionExpired { key } => Context::kind("expired").key(key),
        LibStore::BranchMissing { .. } => Context::kind("not_found"),
        LibStore::HeadMoved { database } => Context::kind("head_moved").path(database),
        _ => Context::kind("store"),
    }
}

fn codec_context(error: &LibCodec) -> Context {
    match error {
        LibCodec::UnknownCodec { .. } | LibCodec::Unavailable { .. } => Context::kind("unsupported"),
        LibCodec::InvalidConfiguration { .. } | LibCodec::InvalidChain { .. } => Context::kind("invalid_metadata"),
        LibCodec::ChecksumMismatch { .. }
        | LibCodec::Corrupt { .. }
        | LibCodec::TooLarge { .. }
        | LibCodec::SizeMismatch { .. } => Context::kind("damaged"),
        LibCodec::ChunkTooLarge { .. } => Context::kind("too_large"),
        _ => Context::kind("codec"),
    }
}

fn array_context(error: &LibArray) -> Context {
    let (kind, array) = match error {
        LibArray::RankMismatch { array, .. }
        | LibArray::OutOfBounds { array, .. }
        | LibArray::BufferLength { array, .. }
        | LibArray::ElementType { array, .. }
        | LibArray::AppendShape { array, .. }
        | LibArray::VariableLength { array, .. }
        | LibArray::ItemCount { array, .. }
        | LibArray::ItemTooLong { array, .. } => ("invalid_region", array),
        LibArray::InvalidItem { array, .. } => ("damaged", array),
        LibArray::TooLarge { array, .. } => ("too_large", array),
        LibArray::RectilinearUnsupported { array, .. } => ("unsupported", array),
        _ => return Context::kind("invalid_region"),
    };
    Context::kind(kind).node(array)
}

fn node_context(error: &LibNode) -> Context {
    match error {
        LibNode::InvalidPath { path, .. } => Context::kind("invalid_path").node(path),
        LibNode::NotFound { path } => Context::kind("not_found").node(path),
        LibNode::AlreadyExists { path } => Context::kind("already_exists").node(path),
        LibNode::WrongKind { path, .. } => Context::kind("wrong_kind").node(path),
        LibNode::ParentIsArray { path, .. } => Context::kind("parent_is_array").node(path),
        LibNode::InvalidMove { from, .. } => Context::kind("invalid_move").node(from),
        _ => Context::kind("node"),
    }
}

fn open_context(error: &LibOpen) -> Context {
    match error {
        LibOpen::NotFound { path } => Context::kind("not_found").path(path),
        LibOpen::WrongBackend { path, .. } => Context::kind("wrong_backend").path(path),
        LibOpen::Locked { path, .. } => Context::kind("locked").path(path),
        LibOpen::Corrupted { path, .. } => Context::kind("damaged").path(path),
        LibOpen::FormatVersion { path, .. } => Context::kind("unsupported_format").path(path),
        LibOpen::Io { path, .. } => Context::kind("io").path(path),
        LibOpen::Engine { path, .. } => Context::kind("engine").path(path),
        _ => Context::kind("open"),
    }
    .operation("open")
}

fn transfer_context(error: &LibTransfer) -> Context {
    match error {
        LibTransfer::SourceNotFound { path } => Context::kind("not_found").path(path),
        LibTransfer::Io { operation, path, .. } => Context::kind("io").path(path).operation(operation),
        LibTransfer::UnsafeName { source_path, .. } => Context::kind("invalid_key").path(source_path),
        LibTransfer::Symlink { path, .. } => Context::kind("invalid_key").path(path),
        LibTransfer::SourceChanged { source_path, key, .. } | LibTransfer::SourceVanished { source_path, key } => {
            Context::kind("conflict").path(source_path).key(key)
        }
        LibTransfer::ValueTooLarge { source_path, key, .. } => Context::kind("too_large").path(source_path).key(key),
        LibTransfer::DestinationExists { path } => Context::kind("already_exists").path(path),
        LibTransfer::DestinationBusy { destination, .. } | LibTransfer::DestinationTaken { destination, .. } => {
            Context::kind("locked").path(destination)
        }
        LibTransfer::ClaimLeft { destination, .. } => Context::kind("io").path(destination),
        LibTransfer::NodeOccupied { node, .. } => Context::kind("already_exists").node(node),
        LibTransfer::NodeNotFound { node } => Context::kind("not_found").node(node),
        _ => Context::kind("transfer"),
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // Class defaults, so an exception raised from Python code (or before its attributes are
    // set) still answers every attribute.
    let base = py.get_type::<Error>();
    base.setattr("kind", "other")?;
    for name in ["key", "node", "path", "operation"] {
        base.setattr(name, py.None())?;
    }
    m.add("Error", base)?;
    m.add("MetadataError", py.get_type::<MetadataError>())?;
    m.add("StoreError", py.get_type::<StoreError>())?;
    m.add("DiskFullError", py.get_type::<DiskFullError>())?;
    m.add("CodecError", py.get_type::<CodecError>())?;
    m.add("ArrayError", py.get_type::<ArrayError>())?;
    m.add("NodeError", py.get_type::<NodeError>())?;
    m.add("OpenError", py.get_type::<OpenError>())?;
    m.add("LockedError", py.get_type::<LockedError>())?;
    m.add("TransactionError", py.get_type::<TransactionError>())?;
    m.add("TransferError", py.get_type::<TransferError>())?;
    m.add("CompactError", py.get_type::<CompactError>())?;
    m.add("HistoryError", py.get_type::<HistoryError>())?;
    Ok(())
}

/// The kinds of `zarrdb.HistoryError` (docs/python.md).
fn history_context(error: &LibHistory) -> Context {
    match error {
        LibHistory::Off { database } => Context::kind("history_off").path(database),
        LibHistory::CannotStart { database, .. } => Context::kind("cannot_start").path(database),
        LibHistory::NotFound { database, .. } => Context::kind("not_found").path(database),
        LibHistory::TagExists { database, .. } => Context::kind("tag_exists").path(database),
        LibHistory::TagDeleted { database, .. } => Context::kind("tag_deleted").path(database),
        LibHistory::Expired { database, .. } => Context::kind("expired").path(database),
        LibHistory::InvalidName { .. } => Context::kind("invalid_name"),
        LibHistory::NameTaken { database, .. } => Context::kind("name_taken").path(database),
        LibHistory::MergeConflict { database, .. } => Context::kind("merge_conflict").path(database),
        LibHistory::InvalidCommitId { .. } => Context::kind("invalid_commit_id"),
        _ => Context::kind("history"),
    }
}
