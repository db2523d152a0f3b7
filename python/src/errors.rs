//! The typed Python exceptions: `zarrdb.Error` and one subclass per error family of the library,
//! each carrying the library's message.

use pyo3::create_exception;
use pyo3::prelude::*;

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

/// The exception for a library error: its family's class, with the library's message.
pub(crate) fn to_py(error: impl Into<zarrdb::Error>) -> PyErr {
    to_py_ref(&error.into())
}

/// `to_py` of an error that others share (one failed group commit, many sets).
pub(crate) fn to_py_ref(error: &zarrdb::Error) -> PyErr {
    let message = error.to_string();
    match error {
        zarrdb::Error::Metadata { .. } => MetadataError::new_err(message),
        zarrdb::Error::Store(zarrdb::error::StoreError::DiskFull { .. }) => DiskFullError::new_err(message),
        zarrdb::Error::Store(_) => StoreError::new_err(message),
        zarrdb::Error::Codec { .. } => CodecError::new_err(message),
        zarrdb::Error::Array(_) => ArrayError::new_err(message),
        zarrdb::Error::Node(_) => NodeError::new_err(message),
        zarrdb::Error::Open(zarrdb::error::OpenError::Locked { .. }) => LockedError::new_err(message),
        zarrdb::Error::Open(_) => OpenError::new_err(message),
        zarrdb::Error::Transaction(_) => TransactionError::new_err(message),
        zarrdb::Error::Transfer(_) => TransferError::new_err(message),
        zarrdb::Error::Compact(_) => CompactError::new_err(message),
        // The enum is non-exhaustive: a family added later is still a zarrdb.Error.
        _ => Error::new_err(message),
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
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
    Ok(())
}
