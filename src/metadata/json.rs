//! Small helpers that read typed members out of a JSON object and report the member's dotted path
//! on failure, so every metadata error names its field.

use serde_json::{Map, Value};

use crate::error::MetadataError;

/// The largest metadata document zarrdb parses. A parsed document takes several times its size
/// in memory; no real one comes near this (at roughly 1.5 KiB per array document,
/// consolidated metadata of 100,000 arrays is about 150 MiB), while a hostile or damaged one can be any size.
pub(crate) const MAX_DOCUMENT_BYTES: u64 = 256 << 20;

/// Parse a metadata document, refusing one above [`MAX_DOCUMENT_BYTES`] before parsing.
pub(crate) fn parse(bytes: &[u8]) -> Result<Value, MetadataError> {
    check_size(bytes.len() as u64)?;
    serde_json::from_slice(bytes).map_err(|source| MetadataError::Json { source })
}

/// `TooLarge` for a document of `bytes` above [`MAX_DOCUMENT_BYTES`].
pub(crate) fn check_size(bytes: u64) -> Result<(), MetadataError> {
    match bytes > MAX_DOCUMENT_BYTES {
        true => Err(MetadataError::TooLarge { bytes, limit: MAX_DOCUMENT_BYTES }),
        false => Ok(()),
    }
}

/// Short rendering of a JSON value for error messages (never the whole document).
pub(crate) fn describe(value: &Value) -> String {
    let text = match value {
        Value::Null => return "null".into(),
        Value::Bool(_) => return format!("boolean {value}"),
        Value::Number(_) => return format!("number {value}"),
        Value::String(_) => format!("string {value}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    };
    if text.chars().count() > 60 {
        format!("{}...", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

pub(crate) fn wrong_type(field: &str, expected: &'static str, value: &Value) -> MetadataError {
    MetadataError::WrongType { field: field.to_owned(), expected, found: describe(value) }
}

pub(crate) fn invalid(field: &str, reason: impl Into<String>) -> MetadataError {
    MetadataError::InvalidValue { field: field.to_owned(), reason: reason.into() }
}

pub(crate) fn as_object<'a>(value: &'a Value, field: &str) -> Result<&'a Map<String, Value>, MetadataError> {
    value.as_object().ok_or_else(|| wrong_type(field, "an object", value))
}

pub(crate) fn required<'a>(obj: &'a Map<String, Value>, name: &str, field: &str) -> Result<&'a Value, MetadataError> {
    obj.get(name).ok_or_else(|| MetadataError::MissingField { field: field.to_owned() })
}

pub(crate) fn as_str<'a>(value: &'a Value, field: &str) -> Result<&'a str, MetadataError> {
    value.as_str().ok_or_else(|| wrong_type(field, "a string", value))
}

/// A non-negative JSON integer (no fraction, no exponent).
pub(crate) fn as_u64(value: &Value, field: &str) -> Result<u64, MetadataError> {
    match value {
        Value::Number(n) => n.as_u64().ok_or_else(|| wrong_type(field, "a non-negative integer", value)),
        _ => Err(wrong_type(field, "a non-negative integer", value)),
    }
}

/// A list of non-negative integers, e.g. a shape.
pub(crate) fn as_u64_list(value: &Value, field: &str) -> Result<Vec<u64>, MetadataError> {
    let items = value.as_array().ok_or_else(|| wrong_type(field, "a list of integers", value))?;
    items.iter().enumerate().map(|(i, item)| as_u64(item, &format!("{field}[{i}]"))).collect()
}

/// The `configuration` member of a `{name, configuration}` object, if present.
pub(crate) fn configuration<'a>(
    obj: &'a Map<String, Value>,
    field: &str,
) -> Result<Option<&'a Map<String, Value>>, MetadataError> {
    match obj.get("configuration") {
        None => Ok(None),
        Some(value) => as_object(value, &format!("{field}.configuration")).map(Some),
    }
}

/// Refuse members other than `allowed` in `obj`.
pub(crate) fn only_members(obj: &Map<String, Value>, allowed: &[&str], field: &str) -> Result<(), MetadataError> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(extra) => Err(MetadataError::UnknownField { field: join(field, extra) }),
        None => Ok(()),
    }
}

pub(crate) fn join(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_owned()
    } else {
        format!("{parent}.{child}")
    }
}

/// An unknown member is allowed only when its value is an object holding `"must_understand": false`.
pub(crate) fn may_ignore(value: &Value) -> bool {
    value.as_object().and_then(|o| o.get("must_understand")) == Some(&Value::Bool(false))
}
