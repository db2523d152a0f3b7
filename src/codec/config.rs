//! Reading codec configurations with errors that name the codec and the member.

use serde_json::{Map, Value};

use crate::error::CodecError;
use crate::metadata::NamedConfig;

/// A codec's configuration object, with typed accessors.
pub(crate) struct Config<'a> {
    codec: &'static str,
    map: Option<&'a Map<String, Value>>,
}

impl<'a> Config<'a> {
    /// Check that only `allowed` members are present.
    pub fn new(codec: &'static str, meta: &'a NamedConfig, allowed: &[&str]) -> Result<Config<'a>, CodecError> {
        let map = meta.configuration.as_ref();
        if let Some(extra) = map.and_then(|m| m.keys().find(|k| !allowed.contains(&k.as_str()))) {
            return Err(invalid(codec, extra, "not a member of this codec's configuration"));
        }
        Ok(Config { codec, map })
    }

    pub fn get(&self, field: &str) -> Option<&'a Value> {
        self.map.and_then(|m| m.get(field))
    }

    pub fn required(&self, field: &str) -> Result<&'a Value, CodecError> {
        self.get(field).ok_or_else(|| invalid(self.codec, field, "required"))
    }

    pub fn error(&self, field: &str, reason: impl Into<String>) -> CodecError {
        invalid(self.codec, field, reason)
    }

    /// An integer within `range`.
    pub fn int(&self, field: &str, range: std::ops::RangeInclusive<i64>) -> Result<Option<i64>, CodecError> {
        let Some(value) = self.get(field) else { return Ok(None) };
        match value.as_i64() {
            Some(v) if range.contains(&v) => Ok(Some(v)),
            _ => {
                Err(self
                    .error(field, format!("expected an integer in {}..={}, found {value}", range.start(), range.end())))
            }
        }
    }

    pub fn string(&self, field: &str) -> Result<Option<&'a str>, CodecError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.error(field, format!("expected a string, found {other}"))),
        }
    }

    pub fn bool(&self, field: &str) -> Result<Option<bool>, CodecError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.error(field, format!("expected true or false, found {other}"))),
        }
    }
}

pub(crate) fn invalid(codec: &str, field: &str, reason: impl Into<String>) -> CodecError {
    CodecError::InvalidConfiguration { codec: codec.into(), field: field.into(), reason: reason.into() }
}

/// A configuration map from `(name, value)` pairs.
pub(crate) fn map<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}
