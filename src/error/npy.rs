//! Errors of reading and writing NumPy's `.npy` files (`transfer::npy`).

use std::io;

use super::PlanError;

/// A `.npy` file could not be read or written, or does not fit the array it is meant for.
/// `source_name` is the file's path, or `-` for standard input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NpyError {
    /// Reading or writing the file failed.
    #[error("{source_name}: {operation} failed: {source}")]
    Io {
        /// The file.
        source_name: String,
        /// `read` or `write`.
        operation: &'static str,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The file does not start with NumPy's magic string or its header is malformed.
    #[error("{source_name} is not a .npy file: {reason}")]
    NotNpy {
        /// The file.
        source_name: String,
        /// What is wrong.
        reason: String,
    },
    /// The header's `descr` names a NumPy type that no Zarr data type holds (objects, subarray
    /// fields, big-endian record fields).
    #[error(transparent)]
    DataType(
        /// Why the type is refused; its key is the file.
        PlanError,
    ),
    /// The array's data type has no NumPy form in a `.npy` file (variable-length text or bytes,
    /// bfloat16).
    #[error("{array}: {data_type} has no .npy form: {reason}")]
    NoNumpyType {
        /// The array.
        array: String,
        /// Its data type.
        data_type: String,
        /// Why, and what to use instead.
        reason: &'static str,
    },
    /// The file's data is shorter or longer than its header's shape and type say.
    #[error("{source_name}: the header promises {expected} bytes of data, the file holds {found}")]
    DataLength {
        /// The file.
        source_name: String,
        /// Bytes the header's shape and type add up to.
        expected: u64,
        /// Bytes found (at least this many, when more).
        found: u64,
    },
    /// The file's element type is not the array's.
    #[error("{source_name} holds {found} elements, {array} holds {expected}")]
    WrongType {
        /// The file.
        source_name: String,
        /// The array.
        array: String,
        /// The array's data type.
        expected: String,
        /// The file's.
        found: String,
    },
    /// The file's shape does not fit where it is meant to go.
    #[error("{source_name} has shape {found:?}: {reason}")]
    WrongShape {
        /// The file.
        source_name: String,
        /// The file's shape.
        found: Vec<u64>,
        /// What it should have been, in words.
        reason: String,
    },
}
