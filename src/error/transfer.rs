//! Errors of import, export and copy.

use std::io;

use super::{NpyError, PlanError, ZipError};

/// An import, export or copy failed. Nothing was written to a database (one transaction), and
/// a directory or zip being exported was removed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransferError {
    /// The source path does not exist or is neither a folder nor a file.
    #[error("import source \"{path}\" is not a folder or a zip file")]
    SourceNotFound {
        /// The path given.
        path: String,
    },
    /// The operating system refused an operation on a file or folder.
    #[error("{operation} \"{path}\" failed: {source}")]
    Io {
        /// What was attempted (`read`, `create`, `rename`, ...).
        operation: &'static str,
        /// The file or folder.
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A name in the source cannot be a store key: it could point outside the hierarchy or
    /// cannot be represented (`..`, an absolute path, a backslash, NUL, an empty segment, a name
    /// that is not UTF-8, or zarrdb's reserved prefix). Nothing is imported.
    #[error("unsafe name \"{name}\" in {source_path}: {reason}")]
    UnsafeName {
        /// The folder or archive holding the name.
        source_path: String,
        /// The name, escaped for display.
        name: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// A symbolic link in a source folder points outside the folder, or to a folder.
    #[error("symbolic link \"{path}\" in an import source: {reason}")]
    Symlink {
        /// The link.
        path: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// A source file changed size while it was being imported.
    #[error("\"{key}\" in {source_path} changed while it was being read ({expected} bytes listed, {found} read)")]
    SourceChanged {
        /// The folder or archive.
        source_path: String,
        /// The key.
        key: String,
        /// The size when listed.
        expected: u64,
        /// The size read.
        found: u64,
    },
    /// A file in a source folder is larger than an import reads (the same limit as for zip
    /// entries).
    #[error("\"{key}\" in {source_path} holds {size} bytes, more than the {limit} an import reads")]
    ValueTooLarge {
        /// The folder.
        source_path: String,
        /// The key.
        key: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// A listed key was gone when its value was read.
    #[error("\"{key}\" in {source_path} disappeared while it was being read")]
    SourceVanished {
        /// The folder, archive or store.
        source_path: String,
        /// The key.
        key: String,
    },
    /// The export destination exists already; export never overwrites.
    #[error("export destination \"{path}\" exists already")]
    DestinationExists {
        /// The destination path.
        path: String,
    },
    /// Another export holds the object-storage destination (its claim, `__zarrdb/export`, is
    /// there): it is running, or it died and left its claim behind.
    #[error(
        "export destination \"{destination}\" is being written by another export ({holder}); if that export died, \
         export again with overwrite"
    )]
    DestinationBusy {
        /// The destination's locator.
        destination: String,
        /// What the claim says of its export (process, host, start time), as found.
        holder: String,
    },
    /// While this export ran, another one took its destination over (an export with overwrite
    /// broke this one's claim, or wrote the root document first); this export's root document
    /// was not written.
    #[error("export to \"{destination}\" was overtaken by another export: {reason}")]
    DestinationTaken {
        /// The destination's locator.
        destination: String,
        /// What was found.
        reason: &'static str,
    },
    /// The export to object storage is complete, but its claim could not be removed (the server
    /// failed at the very end): the next export there is refused until it overwrites.
    #[error(
        "export to \"{destination}\" is complete, but its claim __zarrdb/export could not be removed \
         (the next export there needs overwrite): {source}"
    )]
    ClaimLeft {
        /// The destination's locator.
        destination: String,
        /// Why the claim was not removed.
        #[source]
        source: Box<crate::Error>,
    },
    /// The database already holds something where the import would land.
    #[error("cannot import or copy to {node}: {reason}")]
    NodeOccupied {
        /// The node path given with `at`.
        node: String,
        /// What is there.
        reason: String,
    },
    /// The node to export or copy does not exist in the source.
    #[error("no node at {node} in the source to export or copy")]
    NodeNotFound {
        /// The node path.
        node: String,
    },
    /// A zip archive is invalid, unsafe or could not be written.
    #[error(transparent)]
    Zip(#[from] ZipError),
    /// The source's hierarchy cannot be imported (layout, metadata, unsupported features).
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A NumPy `.npy` file could not be read or written, or does not fit its array.
    #[error(transparent)]
    Npy(#[from] NpyError),
}
