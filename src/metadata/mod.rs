//! Metadata documents: Zarr v3 `zarr.json` for arrays and groups, and the types they are built
//! from. Parsing is strict as the spec demands; every error names the offending field.

mod array;
mod auto_chunks;
pub(crate) mod base64;
mod chunk_grid;
mod chunk_key_encoding;
mod codec;
pub(crate) mod consolidated;
mod data_type;
mod extension;
pub(crate) mod fill_value;
mod group;
pub(crate) mod json;
mod time_unit;

use serde_json::{Map, Value};

pub use array::ArrayMetadata;
pub use chunk_grid::{ChunkGrid, Edges, RectilinearGrid, Run};
pub use chunk_key_encoding::{ChunkKeyEncoding, Separator};
pub use codec::{Codec, Endian, IndexLocation, ShardingConfig};
pub(crate) use data_type::Layout;
pub use data_type::{DataType, StructSpelling, StructuredType};
pub use extension::NamedConfig;
pub use fill_value::FillValue;
pub use group::GroupMetadata;
pub use time_unit::TimeUnit;

use crate::error::MetadataError;
use json::{as_object, as_str, invalid, required};

pub use crate::key::METADATA_KEY;

/// Either kind of node metadata document.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeMetadata {
    /// An array document.
    Array(ArrayMetadata),
    /// A group document.
    Group(GroupMetadata),
}

impl NodeMetadata {
    /// Parse a `zarr.json` of either kind, dispatching on `node_type`.
    ///
    /// ```
    /// use zarrdb::metadata::NodeMetadata;
    /// let meta = NodeMetadata::from_json(br#"{"zarr_format": 3, "node_type": "group"}"#).unwrap();
    /// assert!(matches!(meta, NodeMetadata::Group(_)));
    /// assert!(NodeMetadata::from_json(br#"{"zarr_format": 2}"#).is_err());
    /// ```
    pub fn from_json(bytes: &[u8]) -> Result<NodeMetadata, MetadataError> {
        let value: Value = json::parse(bytes)?;
        let obj = as_object(&value, "(document)")?;
        array::zarr_format(obj)?;
        let node_type = as_str(required(obj, "node_type", "node_type")?, "node_type")?;
        match node_type {
            "array" => Ok(NodeMetadata::Array(ArrayMetadata::from_object(obj)?)),
            "group" => Ok(NodeMetadata::Group(GroupMetadata::from_object(obj)?)),
            other => Err(invalid("node_type", format!("must be \"array\" or \"group\", found \"{other}\""))),
        }
    }

    /// The document as JSON.
    pub fn to_json(&self) -> Value {
        match self {
            NodeMetadata::Array(meta) => meta.to_json(),
            NodeMetadata::Group(meta) => meta.to_json(),
        }
    }
}

fn check_header(obj: &Map<String, Value>, expected: &str) -> Result<(), MetadataError> {
    array::zarr_format(obj)?;
    let node_type = as_str(required(obj, "node_type", "node_type")?, "node_type")?;
    if node_type != expected {
        return Err(invalid("node_type", format!("must be \"{expected}\", found \"{node_type}\"")));
    }
    Ok(())
}

fn pretty(value: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(value).expect("a serde_json::Value always serializes");
    out.push(b'\n');
    out
}
