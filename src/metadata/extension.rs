//! `{"name": ..., "configuration": {...}}` objects: codecs and storage transformers.

use serde_json::{Map, Value};

use super::json::{as_str, configuration, only_members, required, wrong_type};
use crate::error::MetadataError;

/// One entry of `codecs` or `storage_transformers`, as written in the metadata. Which names are
/// understood is decided by the layer that uses them (the codec registry), not here.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedConfig {
    /// The extension's name, e.g. `"bytes"`.
    pub name: String,
    /// Its configuration object, if any.
    pub configuration: Option<Map<String, Value>>,
}

impl NamedConfig {
    /// A named extension without configuration.
    pub fn new(name: impl Into<String>) -> NamedConfig {
        NamedConfig { name: name.into(), configuration: None }
    }

    /// A named extension with a configuration object.
    pub fn with_configuration(name: impl Into<String>, configuration: Map<String, Value>) -> NamedConfig {
        NamedConfig { name: name.into(), configuration: Some(configuration) }
    }

    /// Parse a `codecs` (or `storage_transformers`) list as written in `zarr.json`; the short form
    /// `"bytes"` is accepted. Which names exist is checked when an array is created or opened.
    ///
    /// ```
    /// let list = serde_json::json!([{"name": "bytes", "configuration": {"endian": "little"}}, "crc32c"]);
    /// let codecs = zarrdb::metadata::NamedConfig::parse_list(&list).unwrap();
    /// assert_eq!(codecs[1], zarrdb::metadata::NamedConfig::new("crc32c"));
    /// assert!(zarrdb::metadata::NamedConfig::parse_list(&serde_json::json!({"name": "bytes"})).is_err());
    /// ```
    pub fn parse_list(value: &Value) -> Result<Vec<NamedConfig>, MetadataError> {
        NamedConfig::list_from_json(value, "codecs", true)
    }

    /// Parse one entry. `bare_string` accepts the short form `"bytes"` seen in the wild for codecs.
    pub(crate) fn from_json(value: &Value, field: &str, bare_string: bool) -> Result<NamedConfig, MetadataError> {
        match value {
            Value::String(name) if bare_string => Ok(NamedConfig::new(name.clone())),
            Value::Object(obj) => {
                // must_understand is part of the extension object syntax of later spec revisions.
                only_members(obj, &["name", "configuration", "must_understand"], field)?;
                let name_field = format!("{field}.name");
                let name = as_str(required(obj, "name", &name_field)?, &name_field)?;
                Ok(NamedConfig { name: name.to_owned(), configuration: configuration(obj, field)?.cloned() })
            }
            other => Err(wrong_type(field, "an object with a name", other)),
        }
    }

    pub(crate) fn list_from_json(
        value: &Value,
        field: &str,
        bare_string: bool,
    ) -> Result<Vec<NamedConfig>, MetadataError> {
        let items = value.as_array().ok_or_else(|| wrong_type(field, "a list", value))?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| NamedConfig::from_json(item, &format!("{field}[{i}]"), bare_string))
            .collect()
    }

    /// The JSON object `zarr.json` holds: `name`, and `configuration` when there is one.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("name".into(), self.name.clone().into());
        if let Some(config) = &self.configuration {
            obj.insert("configuration".into(), Value::Object(config.clone()));
        }
        Value::Object(obj)
    }
}
