//! Zip archives: a reader that treats every archive as untrusted, a streaming writer, and the
//! read-only [`ZipStore`] over the reader. The store and the import read archives through the
//! same reader, so they keep one policy; the export writes them.
//!
//! The reader ([`ZipReader`]) reads the archives zarr-python's `ZipStore` and `zip -r` make:
//! stored or deflated entries, Zip64, duplicate names (the last one wins, as in `ZipStore`). It
//! checks the whole central directory when opening (limits, encryption, methods, names, layout),
//! so a zip bomb or an ambiguous archive is refused before anything is inflated, and verifies the
//! size and CRC-32 of every entry it returns. The writer ([`ZipWriter`]) writes stored entries,
//! with Zip64 records only where needed, which Python's zipfile and tensorstore read.

mod end;
mod entry;
mod format;
mod read;
mod source;
mod write;
mod zip_store;

#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) use read::Method;
pub(crate) use read::{ZipEntry, ZipLimits, ZipReader};
pub(crate) use write::ZipWriter;
pub use zip_store::ZipStore;
