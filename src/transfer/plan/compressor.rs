//! Compressors of the older layouts as v3 bytes -> bytes codecs: v2 `compressor` objects
//! (numcodecs configurations), v1 `compression` + `compression_opts`, and the draft's
//! `compressor` with a purl codec URI. All three use numcodecs' parameter names, so one mapping
//! serves them.

use serde_json::{Map, Value};

use super::dtype::Dtype;
use super::PlanError;
use crate::metadata::json::{describe, join, wrong_type};
use crate::metadata::NamedConfig;

/// Compressors whose streams no v3 codec of zarrdb reads.
const NO_V3_CODEC: [&str; 1] = ["zfpy"];

/// zarr-python 3's name for the zlib codec; `codec::zlib` registers the same name.
const ZLIB: &str = "numcodecs.zlib";

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

/// One compressor by its numcodecs id. `fields` names the members that hold the id and the
/// parameters in the document, for errors.
fn convert(
    id: &str,
    params: &Map<String, Value>,
    dtype: Dtype,
    key: &str,
    fields: (&str, &str),
) -> Result<NamedConfig, PlanError> {
    let (id_field, field) = fields;
    let p = Params { params, key, field };
    match id {
        "zlib" | "gzip" => {
            p.only(&["level"])?;
            // numcodecs' default level for both.
            let mut level = p.get("level").cloned().unwrap_or(Value::from(1));
            // zlib's "default level" (-1, which numcodecs passes through) is level 6. The level
            // only matters for encoding; the stored chunks read the same at any level.
            if level.as_i64() == Some(-1) {
                level = Value::from(6);
            }
            let name = if id == "zlib" { ZLIB } else { "gzip" };
            Ok(NamedConfig::with_configuration(name, [("level".to_owned(), level)].into_iter().collect()))
        }
        "zstd" => {
            p.only(&["level", "checksum"])?;
            let mut config = Map::new();
            config.insert("level".into(), p.get("level").cloned().unwrap_or(Value::from(0)));
            match p.get("checksum") {
                None | Some(Value::Bool(false)) => {}
                Some(Value::Bool(true)) => {
                    config.insert("checksum".into(), true.into());
                }
                Some(other) => return Err(p.wrong_type("checksum", "true or false", other)),
            }
            Ok(NamedConfig::with_configuration("zstd", config))
        }
        "blosc" => {
            // `typesize` appears in some writers' configurations; the frame header records the
            // one used, so the data type's size is written instead.
            p.only(&["cname", "clevel", "shuffle", "blocksize", "typesize"])?;
            // Variable-length chunks reach the compressor as an item list, a plain byte buffer, and
            // blosc's typesize stops at 255 (numcodecs passes wider items as bytes too).
            let size = dtype.data_type.size().clamp(1, 255);
            let shuffle = match p.get("shuffle") {
                // numcodecs' default: byte shuffle.
                None => "shuffle",
                Some(value) => match value.as_i64() {
                    Some(0) => "noshuffle",
                    Some(1) => "shuffle",
                    Some(2) => "bitshuffle",
                    // AUTOSHUFFLE: what numcodecs picks when it encodes.
                    Some(-1) if size == 1 => "bitshuffle",
                    Some(-1) => "shuffle",
                    _ => {
                        return Err(PlanError::unsupported(
                            key,
                            &join(field, "shuffle"),
                            describe(value),
                            "expected 0 (none), 1 (byte), 2 (bit) or -1 (automatic)",
                        ))
                    }
                },
            };
            let mut config = Map::new();
            config.insert("cname".into(), p.get("cname").cloned().unwrap_or_else(|| "lz4".into()));
            config.insert("clevel".into(), p.get("clevel").cloned().unwrap_or(Value::from(5)));
            config.insert("shuffle".into(), shuffle.into());
            // c-blosc treats a type wider than 255 bytes as a byte stream (typesize 1).
            config.insert("typesize".into(), (if size > 255 { 1 } else { size }).into());
            config.insert("blocksize".into(), p.get("blocksize").cloned().unwrap_or(Value::from(0)));
            Ok(NamedConfig::with_configuration("blosc", config))
        }
        // numcodecs' own codecs under zarr-python 3's names; their parameters are the v3
        // configuration, checked when the chain is built. Defaults are written out, as numcodecs'
        // `get_config` does.
        "lz4" | "bz2" => {
            let (member, default) = if id == "lz4" { ("acceleration", 1) } else { ("level", 1) };
            p.only(&[member])?;
            let value = p.get(member).cloned().unwrap_or(Value::from(default));
            Ok(NamedConfig::with_configuration(
                format!("numcodecs.{id}"),
                [(member.to_owned(), value)].into_iter().collect(),
            ))
        }
        "lzma" => {
            p.only(&["format", "check", "preset", "filters"])?;
            Ok(NamedConfig::with_configuration("numcodecs.lzma", params.clone()))
        }
        // The checksums: the bytes and a 4-byte checksum, as numcodecs stores them whether it
        // runs them as the compressor or as a filter.
        "crc32" | "adler32" | "fletcher32" => checksum(id, &p),
        other if NO_V3_CODEC.contains(&other) => Err(PlanError::unsupported(
            key,
            id_field,
            format!("\"{other}\""),
            "zarrdb has no codec that reads this compressor's chunks",
        )),
        other => Err(PlanError::unsupported(
            key,
            id_field,
            format!("\"{other}\""),
            "not a compressor zarrdb can convert (zlib, gzip, zstd, blosc, lz4, bz2, lzma, crc32, adler32 or fletcher32)",
        )),
    }
}

/// A numcodecs checksum (`crc32`, `adler32`, `fletcher32`) as its v3 codec, parameters kept.
pub(crate) fn checksum(id: &str, p: &Params<'_>) -> Result<NamedConfig, PlanError> {
    let allowed: &[&str] = if id == "fletcher32" { &[] } else { &["location"] };
    p.only(allowed)?;
    Ok(NamedConfig::with_configuration(format!("numcodecs.{id}"), p.params.clone()))
}

/// A compressor's parameters, with errors that name the document and member.
pub(crate) struct Params<'a> {
    pub params: &'a Map<String, Value>,
    pub key: &'a str,
    pub field: &'a str,
}

impl Params<'_> {
    fn get(&self, name: &str) -> Option<&Value> {
        self.params.get(name)
    }

    /// Unknown parameters may change the stream, so they are refused rather than dropped.
    fn only(&self, allowed: &[&str]) -> Result<(), PlanError> {
        match self.params.iter().find(|(name, _)| !allowed.contains(&name.as_str())) {
            Some((name, value)) => Err(PlanError::unsupported(
                self.key,
                &join(self.field, name),
                describe(value),
                "not a parameter zarrdb knows for this compressor",
            )),
            None => Ok(()),
        }
    }

    fn wrong_type(&self, name: &str, expected: &'static str, value: &Value) -> PlanError {
        PlanError::metadata(self.key, wrong_type(&join(self.field, name), expected, value))
    }
}
