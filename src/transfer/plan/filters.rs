//! Zarr v2 `filters` as v3 codecs. numcodecs applies a v2 array's filters in order to the chunk's
//! flattened elements, then the compressor to the bytes; in v3 terms the element filters are
//! array -> array codecs between the F-order transpose and `bytes`, and `shuffle` a bytes -> bytes
//! codec before the compressor. Each filter's configuration (its numcodecs parameters less `id`)
//! is the v3 codec's, under zarr-python 3's name `numcodecs.<id>`; the codec checks it when the
//! converted chain is built.
//!
//! The filters work on values, so the byte order of the dtype strings in their parameters only
//! matters where numcodecs would reinterpret bytes: a filter whose input dtype has another byte
//! order than the data it receives is refused, and the byte order of the last type-changing
//! filter's output becomes the `bytes` codec's `endian`.

use serde_json::{Map, Value};

use super::dtype::{Dtype, Endian};
use super::PlanError;
use crate::codec::registry::{self, V2Filter, V2Params};
use crate::metadata::json::{describe, wrong_type};
use crate::metadata::NamedConfig;

/// A v2 array's filters, converted.
#[derive(Debug, Default)]
pub(crate) struct Filters {
    /// Codecs before `bytes`.
    pub array: Vec<NamedConfig>,
    /// Codecs after `bytes`, before the compressor.
    pub bytes: Vec<NamedConfig>,
    /// The byte order the `bytes` codec writes when a filter changed the element type (`Some`),
    /// `None` to keep the array's.
    pub endian: Option<Option<Endian>>,
}

/// Object codecs and filters that make or take objects. An object array's first filter, its
/// object codec, never reaches this module (`dtype::object_codec` turns `vlen-utf8` and
/// `vlen-bytes` into the array -> bytes codec); anywhere else these have no v3 codec chain.
const NEEDS_OBJECT_TYPES: [&str; 7] =
    ["vlen-utf8", "vlen-bytes", "vlen-array", "json2", "pickle", "msgpack2", "categorize"];

/// The byte order a numpy dtype string spells out, if any.
fn endian_of(text: &str) -> Option<Endian> {
    match text.chars().next() {
        Some('<') => Some(Endian::Little),
        Some('>') => Some(Endian::Big),
        _ => None,
    }
}

/// A v2 `filters` member (null, or a list of numcodecs configurations) of an array of `dtype`.
pub(crate) fn from_v2(value: Option<&Value>, dtype: Dtype, key: &str) -> Result<Filters, PlanError> {
    let list = match value {
        None | Some(Value::Null) => return Ok(Filters::default()),
        Some(Value::Array(list)) => list,
        Some(other) => return Err(PlanError::metadata(key, wrong_type("filters", "a list or null", other))),
    };
    let mut filters = Filters::default();
    // The byte order of the elements the next filter receives.
    let mut current = dtype.endian;
    for (i, item) in list.iter().enumerate() {
        let field = format!("filters[{i}]");
        let Some(obj) = item.as_object() else {
            return Err(PlanError::metadata(key, wrong_type(&field, "an object", item)));
        };
        let id = match obj.get("id") {
            Some(Value::String(id)) => id.as_str(),
            Some(other) => return Err(PlanError::metadata(key, wrong_type(&format!("{field}.id"), "a string", other))),
            None => {
                return Err(PlanError::metadata(
                    key,
                    crate::error::MetadataError::MissingField { field: format!("{field}.id") },
                ))
            }
        };
        let refuse = |reason: &str| PlanError::unsupported(key, &format!("{field}.id"), format!("\"{id}\""), reason);
        let mut params: Map<String, Value> = obj.clone();
        params.remove("id");
        if NEEDS_OBJECT_TYPES.contains(&id) {
            return Err(refuse(
                "an object codec is read only as the first filter of an object (|O) array, as vlen-utf8 or vlen-bytes",
            ));
        }
        // The codec that registers this numcodecs id as a filter (`codec::registry`).
        let Some((registration, filter)) =
            registry::find_v2(id).and_then(|(r, v2)| v2.filter.map(|filter| (r, filter)))
        else {
            return Err(refuse("not a filter zarrdb can convert"));
        };
        let (input, output, no_byte_order) = match filter {
            V2Filter::Bytes(convert) => {
                // A filter on the bytes (shuffle, a checksum) works like the compressor after it.
                let p = V2Params { params: &params, key, field: &field };
                filters.bytes.push(convert(&p, &dtype.data_type)?);
                continue;
            }
            V2Filter::Element { input, output, no_byte_order } => (input, output, no_byte_order),
        };
        let codec = NamedConfig::with_configuration(registration.names[0], params.clone());
        if !filters.bytes.is_empty() {
            return Err(refuse("an element filter after a byte filter (shuffle) has no v3 equivalent"));
        }
        let text = |name: Option<&str>| name.and_then(|n| params.get(n)).and_then(Value::as_str);
        if let Some(given) = text(input).and_then(endian_of) {
            if current.is_some_and(|c| c != given) {
                return Err(PlanError::unsupported(
                    key,
                    &format!("{field}.{}", input.unwrap_or_default()),
                    describe(&params[input.unwrap_or_default()]),
                    "the byte order differs from the data's: numcodecs would read the bytes as other values",
                ));
            }
        }
        if no_byte_order {
            current = None;
            filters.endian = Some(None);
        } else if let Some(out) = text(output) {
            // A type string without byte order is numpy's native one, little-endian here.
            let out = endian_of(out).or(if out.starts_with('|') { None } else { Some(Endian::Little) });
            current = out;
            filters.endian = Some(out);
        }
        filters.array.push(codec);
    }
    Ok(filters)
}
