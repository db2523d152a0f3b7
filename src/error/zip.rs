//! Why reading or writing a zip archive failed.

use std::io;

/// Reading or writing a zip archive failed.
///
/// Every variant names the archive and, where one is involved, the entry, so that a message in a
/// log is enough to find the offending member of a hostile or damaged archive.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ZipError {
    /// The operating system refused to open, read, write or sync the archive.
    #[error("zip archive \"{path}\": {source}")]
    Io {
        /// The archive.
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// No end-of-central-directory record in the last 65,557 bytes: the file is not a zip archive
    /// (or lost its end).
    #[error("\"{path}\" is not a zip archive (no end of central directory record)")]
    NotAZip {
        /// The file.
        path: String,
    },
    /// A structure the archive's own records point at lies (partly) past the end of the file.
    #[error("zip archive \"{path}\" is truncated: {what} extends past the end of the file")]
    Truncated {
        /// The archive.
        path: String,
        /// Which structure is cut off.
        what: &'static str,
    },
    /// The archive's directory structures contradict themselves or the zip format.
    #[error("zip archive \"{path}\" is malformed: {reason}")]
    Malformed {
        /// The archive.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// One entry's records contradict themselves or the zip format.
    #[error("zip archive \"{path}\": entry \"{entry}\" is malformed: {reason}")]
    MalformedEntry {
        /// The archive.
        path: String,
        /// The entry's name (from the central directory).
        entry: String,
        /// What is wrong.
        reason: String,
    },
    /// The entry is encrypted; zarrdb reads no encrypted archives.
    #[error("zip archive \"{path}\": entry \"{entry}\" is encrypted")]
    Encrypted {
        /// The archive.
        path: String,
        /// The entry's name.
        entry: String,
    },
    /// The entry uses a compression method other than stored (0) and deflate (8).
    #[error("zip archive \"{path}\": entry \"{entry}\" uses unsupported compression method {method}")]
    UnsupportedMethod {
        /// The archive.
        path: String,
        /// The entry's name.
        entry: String,
        /// The method number found.
        method: u16,
    },
    /// An entry's name is not UTF-8 (e.g. a legacy code page), so it cannot be a Zarr key.
    #[error("zip archive \"{path}\": entry name \"{name}\" is not UTF-8")]
    NonUtf8Name {
        /// The archive.
        path: String,
        /// The raw name, non-ASCII bytes escaped as `\xNN`.
        name: String,
    },
    /// The local file header carries a different name than the central directory: readers that
    /// trust one or the other would see different archives.
    #[error("zip archive \"{path}\": entry \"{entry}\" is named \"{local_name}\" in its local header")]
    NameMismatch {
        /// The archive.
        path: String,
        /// The name in the central directory.
        entry: String,
        /// The name in the local header, escaped like [`ZipError::NonUtf8Name`].
        local_name: String,
    },
    /// The entry's data holds more or fewer bytes than its declared size.
    #[error("zip archive \"{path}\": entry \"{entry}\" declares {declared} bytes but {}", found(*.declared, *.actual))]
    SizeMismatch {
        /// The archive.
        path: String,
        /// The entry's name.
        entry: String,
        /// The uncompressed size the central directory declares.
        declared: u64,
        /// The bytes actually found. Inflating stops one byte past the declared size, so
        /// `declared + 1` stands for "more than declared".
        actual: u64,
    },
    /// The entry's bytes do not match the CRC-32 in the central directory.
    #[error("zip archive \"{path}\": entry \"{entry}\": CRC-32 mismatch (declared {declared:#010x}, computed {computed:#010x})")]
    CrcMismatch {
        /// The archive.
        path: String,
        /// The entry's name.
        entry: String,
        /// The CRC-32 the central directory declares.
        declared: u32,
        /// The CRC-32 of the bytes read.
        computed: u32,
    },
    /// The entry's declared size exceeds the limit for one entry.
    #[error("zip archive \"{path}\": entry \"{entry}\" declares {size} bytes, more than the limit of {limit}")]
    TooLarge {
        /// The archive.
        path: String,
        /// The entry's name.
        entry: String,
        /// The declared uncompressed size.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// The entry would expand far more than real data does: a decompression bomb, refused before
    /// anything is inflated.
    #[error("zip archive \"{path}\": entry \"{entry}\" expands {compressed_size} bytes to {size} (more than {max_ratio} times): refused as a zip bomb")]
    ZipBomb {
        /// The archive.
        path: String,
        /// The entry's name.
        entry: String,
        /// The declared uncompressed size.
        size: u64,
        /// The declared compressed size.
        compressed_size: u64,
        /// The largest expansion ratio accepted.
        max_ratio: u64,
    },
    /// The archive declares more entries than the limit.
    #[error("zip archive \"{path}\" declares {count} entries, more than the limit of {limit}")]
    TooManyEntries {
        /// The archive.
        path: String,
        /// The declared number of entries.
        count: u64,
        /// The limit.
        limit: u64,
    },
    /// An entry's local header or data overlaps another entry or the central directory, as in
    /// overlapping-entry zip bombs and archives built to show different readers different data.
    #[error("zip archive \"{path}\": entry \"{entry}\" overlaps {other}")]
    Overlap {
        /// The archive.
        path: String,
        /// The entry's name.
        entry: String,
        /// What it overlaps: another entry (named) or the central directory.
        other: String,
    },
    /// The writer was asked to add a name it has already written.
    #[error("zip archive \"{path}\": entry \"{entry}\" was already added")]
    DuplicateName {
        /// The archive being written.
        path: String,
        /// The repeated name.
        entry: String,
    },
    /// The writer was given a name longer than a zip header can hold (65,535 bytes).
    #[error("zip archive \"{path}\": entry name of {len} bytes is longer than 65535 bytes")]
    NameTooLong {
        /// The archive being written.
        path: String,
        /// The name's length in bytes.
        len: usize,
    },
}

/// Renders [`ZipError::SizeMismatch`]'s `actual`, which inflation caps at `declared + 1`.
fn found(declared: u64, actual: u64) -> String {
    if declared.checked_add(1) == Some(actual) {
        "its data holds more".to_owned()
    } else {
        format!("its data holds {actual}")
    }
}
