//! The `Io` error constructor of import, export and copy (the error types live in the error
//! layer, `crate::error`, with every other family's).

use std::io;

pub use crate::error::TransferError;

/// An `Io` error constructor for `map_err`.
pub(crate) fn io_error(operation: &'static str, path: &std::path::Path) -> impl FnOnce(io::Error) -> TransferError {
    let path = path.display().to_string();
    move |source| TransferError::Io { operation, path, source }
}
