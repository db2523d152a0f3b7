//! The group metadata document (spec "Group metadata").

use serde_json::{Map, Value};

use super::json::{as_object, may_ignore};
use crate::error::MetadataError;

use super::consolidated;

/// A Zarr v3 group's `zarr.json`, validated.
///
/// ```
/// let meta = zarrdb::GroupMetadata::from_json(br#"{"zarr_format": 3, "node_type": "group"}"#).unwrap();
/// assert!(meta.attributes.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct GroupMetadata {
    /// User attributes.
    pub attributes: Map<String, Value>,
    /// Members outside the spec that may be ignored, kept and written back.
    pub extra: Map<String, Value>,
}

impl GroupMetadata {
    /// A group document with these attributes.
    pub fn new(attributes: Map<String, Value>) -> GroupMetadata {
        GroupMetadata { attributes, extra: Map::new() }
    }

    /// Parse and validate a `zarr.json` that must describe a group.
    pub fn from_json(bytes: &[u8]) -> Result<GroupMetadata, MetadataError> {
        let value: Value = super::json::parse(bytes)?;
        let obj = as_object(&value, "(document)")?;
        super::check_header(obj, "group")?;
        GroupMetadata::from_object(obj)
    }

    pub(crate) fn from_object(obj: &Map<String, Value>) -> Result<GroupMetadata, MetadataError> {
        let mut extra = Map::new();
        for (name, value) in obj {
            match name.as_str() {
                "zarr_format" | "node_type" | "attributes" => {}
                // zarr-python writes it without `must_understand`; zarrdb never keeps it (see
                // `consolidated.rs`), so a group written back never carries a stale copy.
                consolidated::MEMBER => {}
                _ if may_ignore(value) => {
                    extra.insert(name.clone(), value.clone());
                }
                _ => return Err(MetadataError::UnknownField { field: name.clone() }),
            }
        }
        let attributes = match obj.get("attributes") {
            Some(value) => as_object(value, "attributes")?.clone(),
            None => Map::new(),
        };
        Ok(GroupMetadata { attributes, extra })
    }

    /// The document as JSON.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("zarr_format".into(), 3.into());
        obj.insert("node_type".into(), "group".into());
        obj.insert("attributes".into(), Value::Object(self.attributes.clone()));
        obj.extend(self.extra.clone());
        Value::Object(obj)
    }

    /// The document as pretty-printed UTF-8 JSON bytes.
    pub fn to_json_bytes(&self) -> Vec<u8> {
        super::pretty(&self.to_json())
    }
}
