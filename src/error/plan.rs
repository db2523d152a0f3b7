//! Why a source cannot be imported. Every variant names the source key (or node) at fault, so
//! the message alone is enough to find the bad file in a directory or archive.

use crate::error::{CodecError, MetadataError};

/// The import plan refused the source: no hierarchy in it, metadata that cannot be read or
/// converted, or nodes that contradict each other.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// No key of the source is the entry point of a Zarr hierarchy: no `zarr.json`, `.zarray`,
    /// `.zgroup` or (Zarr v1) `meta`.
    #[error(
        "no Zarr hierarchy found: no zarr.json, .zarray, .zgroup or (Zarr v1) meta key among the {keys} keys of the source"
    )]
    NoHierarchy {
        /// How many keys the source holds.
        keys: usize,
    },
    /// Two layouts that cannot be combined, e.g. a Zarr v2 node beside Zarr v3 nodes without a
    /// `zarr.json` of its own, or 2020-draft metadata beside a Zarr v3 node.
    #[error("\"{first}\" ({first_layout}) and \"{second}\" ({second_layout}) belong to different Zarr layouts")]
    MixedLayouts {
        /// A metadata key of the first layout.
        first: String,
        /// Which layout `first` belongs to.
        first_layout: &'static str,
        /// A metadata key of the other layout.
        second: String,
        /// Which layout `second` belongs to.
        second_layout: &'static str,
    },
    /// A metadata key does not hold a JSON document.
    #[error("\"{key}\" is not valid JSON: {source}")]
    InvalidJson {
        /// The source key.
        key: String,
        /// The parser's error, with line and column.
        #[source]
        source: serde_json::Error,
    },
    /// A metadata document is malformed: a missing member, a wrong type, a value out of range.
    /// The source names the member.
    #[error("\"{key}\": {source}")]
    InvalidMetadata {
        /// The source key of the document.
        key: String,
        /// What is wrong, with the member's dotted path.
        #[source]
        source: MetadataError,
    },
    /// An array's codec chain (as found in a v3 document, or as converted from a v2, v1 or draft
    /// compressor) cannot be built: an unknown codec, a bad configuration.
    #[error("\"{key}\": {source}")]
    InvalidCodecs {
        /// The source key of the array's metadata.
        key: String,
        /// The codec layer's error.
        #[source]
        source: CodecError,
    },
    /// A well-formed document uses something that has no Zarr v3 equivalent zarrdb can store,
    /// e.g. a structured or string dtype, filters, or a bz2 compressor.
    #[error("\"{key}\": field \"{field}\" = {value}: {reason}")]
    Unsupported {
        /// The source key of the document.
        key: String,
        /// The member's dotted path, e.g. `compressor.id`.
        field: String,
        /// A short rendering of the refused value.
        value: String,
        /// Why it cannot be imported.
        reason: String,
    },
    /// A node's metadata lies below an array, where only the array's chunks may be.
    #[error("\"{key}\" lies inside array \"{array}\"")]
    NodeInsideArray {
        /// The nested node's metadata key.
        key: String,
        /// The enclosing array's metadata key.
        array: String,
    },
    /// Two metadata documents describe the same node as different things (a v2 `.zarray` and a
    /// `.zgroup` in one folder, a draft `.array.json` and `.group.json` for one path).
    #[error("node \"{path}\" is described by both \"{first}\" and \"{second}\"")]
    ConflictingNodes {
        /// The node's path relative to the import root (`""` for the root).
        path: String,
        /// One metadata key.
        first: String,
        /// The other metadata key.
        second: String,
    },
    /// Exclusion patterns name node paths, which only Zarr v3 and v2 sources lay out as folders.
    #[error("--exclude applies to Zarr v3 and v2 sources; this source is {layout}")]
    ExcludeUnsupported {
        /// The source's layout.
        layout: &'static str,
    },
    /// Reading a key from the source failed.
    #[error("reading \"{key}\" failed: {source}")]
    Read {
        /// The source key.
        key: String,
        /// The source's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl PlanError {
    pub(crate) fn metadata(key: &str, source: MetadataError) -> PlanError {
        PlanError::InvalidMetadata { key: key.to_owned(), source }
    }

    pub(crate) fn unsupported(
        key: &str,
        field: &str,
        value: impl std::fmt::Display,
        reason: impl Into<String>,
    ) -> PlanError {
        PlanError::Unsupported {
            key: key.to_owned(),
            field: field.to_owned(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}
