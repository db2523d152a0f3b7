//! Compressors of the older layouts as v3 bytes -> bytes codecs: v2 `compressor` objects
//! (numcodecs configurations), v1 `compression` + `compression_opts`, and the draft's
//! `compressor` with a purl codec URI. All three use numcodecs' parameter names, so one mapping
//! serves them: each codec's own (its `V2` registration, `codec/v2.rs`).

use serde_json::{Map, Value};

use super::dtype::Dtype;
use super::PlanError;
use crate::codec::registry::{self, V2Params as Params};
use crate::metadata::json::{describe, wrong_type};
use crate::metadata::NamedConfig;

/// Compressors whose streams no v3 codec of zarrdb reads.
const NO_V3_CODEC: [&str; 1] = ["zfpy"];

/// The draft's codec URIs: `https://purl.org/zarr/spec/codec/<id>/<version>`.
const DRAFT_CODEC_PREFIX: &str = "https://purl.org/zarr/spec/codec/";

/// A v2 `compressor` member: `null` or an object with `"id"` and the codec's parameters.
pub(crate) fn from_v2(value: &Value, dtype: Dtype, key: &str) -> Result<Option<NamedConfig>, PlanError> {
    let obj = match value {
        Value::Null => return Ok(None),
        Value::Object(obj) => obj,
        other => return Err(PlanError::metadata(key, wrong_type("compressor", "an object or null", other))),
    };
    let id = match obj.get("id") {
        Some(Value::String(id)) => id.as_str(),
        Some(other) => return Err(PlanError::metadata(key, wrong_type("compressor.id", "a string", other))),
        None => {
            return Err(PlanError::metadata(
                key,
                crate::error::MetadataError::MissingField { field: "compressor.id".into() },
            ))
        }
    };
    let mut params = obj.clone();
    params.remove("id");
    convert(id, &params, dtype, key, ("compressor.id", "compressor")).map(Some)
}

/// A v1 `compression` name with its `compression_opts` (a zlib level, or a blosc object).
pub(crate) fn from_v1(
    compression: &Value,
    opts: Option<&Value>,
    dtype: Dtype,
    key: &str,
) -> Result<Option<NamedConfig>, PlanError> {
    let name = match compression {
        Value::Null => return Ok(None),
        Value::String(name) if name == "none" => return Ok(None),
        Value::String(name) => name.as_str(),
        other => return Err(PlanError::metadata(key, wrong_type("compression", "a string", other))),
    };
    let params = match (name, opts) {
        (_, None | Some(Value::Null)) => Map::new(),
        // zlib's (and bz2's, lzma's) options were the bare level.
        (_, Some(level @ Value::Number(_))) => [("level".to_owned(), level.clone())].into_iter().collect(),
        (_, Some(Value::Object(obj))) => obj.clone(),
        (_, Some(other)) => {
            return Err(PlanError::unsupported(
                key,
                "compression_opts",
                describe(other),
                format!("not options of the \"{name}\" compressor"),
            ))
        }
    };
    convert(name, &params, dtype, key, ("compression", "compression_opts")).map(Some)
}

/// A draft `compressor`: `{"codec": URI, "configuration": {...}}`; absent means none.
pub(crate) fn from_draft(value: Option<&Value>, dtype: Dtype, key: &str) -> Result<Option<NamedConfig>, PlanError> {
    let obj = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(obj)) => obj,
        Some(other) => return Err(PlanError::metadata(key, wrong_type("compressor", "an object", other))),
    };
    let uri = match obj.get("codec") {
        Some(Value::String(uri)) => uri.as_str(),
        Some(other) => return Err(PlanError::metadata(key, wrong_type("compressor.codec", "a string", other))),
        None => {
            return Err(PlanError::metadata(
                key,
                crate::error::MetadataError::MissingField { field: "compressor.codec".into() },
            ))
        }
    };
    let id = uri
        .strip_prefix(DRAFT_CODEC_PREFIX)
        .and_then(|rest| rest.split_once('/'))
        .filter(|(_, version)| version.starts_with("1."))
        .map(|(id, _)| id)
        .ok_or_else(|| {
            PlanError::unsupported(key, "compressor.codec", format!("\"{uri}\""), "not a codec URI of the 2020 draft")
        })?;
    let params = match obj.get("configuration") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(config)) => config.clone(),
        Some(other) => {
            return Err(PlanError::metadata(key, wrong_type("compressor.configuration", "an object", other)))
        }
    };
    convert(id, &params, dtype, key, ("compressor.codec", "compressor.configuration")).map(Some)
}

/// One compressor by its numcodecs id, through the codec that registers it (`codec::registry`).
/// `fields` names the members that hold the id and the parameters in the document, for errors.
fn convert(
    id: &str,
    params: &Map<String, Value>,
    dtype: Dtype,
    key: &str,
    fields: (&str, &str),
) -> Result<NamedConfig, PlanError> {
    let (id_field, field) = fields;
    let p = Params { params, key, field };
    if let Some(convert) = registry::find_v2(id).and_then(|(_, v2)| v2.compressor) {
        return convert(&p, &dtype.data_type);
    }
    let reason = if NO_V3_CODEC.contains(&id) {
        "zarrdb has no codec that reads this compressor's chunks".to_owned()
    } else {
        let ids = registry::v2_compressor_ids();
        let (last, rest) = ids.split_last().expect("codecs with a v2 compressor are registered");
        format!("not a compressor zarrdb can convert ({} or {last})", rest.join(", "))
    };
    Err(PlanError::unsupported(key, id_field, format!("\"{id}\""), reason))
}
