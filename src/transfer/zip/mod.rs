//! Zip archives: a reader that treats every archive as untrusted and a streaming writer.
//!
//! The reader ([`ZipReader`]) reads the archives zarr-python's `ZipStore` and `zip -r` make:
//! stored or deflated entries, Zip64, duplicate names (the last one wins, as in `ZipStore`). It
//! checks the whole central directory when opening (limits, encryption, methods, names, layout),
//! so a zip bomb or an ambiguous archive is refused before anything is inflated, and verifies the
//! size and CRC-32 of every entry it returns. The writer ([`ZipWriter`]) writes stored entries,
//! with Zip64 records only where needed, which Python's zipfile and tensorstore read.

mod end;
mod entry;
mod error;
mod format;
mod read;
mod source;
mod write;

#[cfg(test)]
mod tests;

pub use error::ZipError;
#[cfg(test)]
pub(crate) use read::Method;
pub(crate) use read::{ZipEntry, ZipLimits, ZipReader};
pub(crate) use write::ZipWriter;
