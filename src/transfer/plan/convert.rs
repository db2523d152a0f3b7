//! Building the v3 documents of converted nodes with the crate's own metadata types, so what an
//! import writes is exactly what the rest of zarrdb writes, and reading members of the older
//! documents with errors that name the key and member.

use serde_json::{Map, Value};

use super::dtype::Dtype;
use super::PlanError;
use crate::array::codec_chain;
use crate::error::MetadataError;
use crate::metadata::json::{as_u64_list, invalid, wrong_type};
use crate::metadata::{ArrayMetadata, ChunkKeyEncoding, Codec, FillValue, GroupMetadata, NamedConfig};

/// A converted array, before it becomes a document.
pub(super) struct ArraySpec {
    pub shape: Vec<u64>,
    pub chunks: Vec<u64>,
    pub dtype: Dtype,
    /// Chunks are stored in F (column-major) order.
    pub f_order: bool,
    pub compressor: Option<NamedConfig>,
    /// Zarr v2 filters (none in the other layouts).
    pub filters: super::filters::Filters,
    pub fill_value: FillValue,
    pub encoding: ChunkKeyEncoding,
    pub attributes: Map<String, Value>,
    pub dimension_names: Option<Vec<Option<String>>>,
}

/// The v3 array document of `spec`, checked the way an array is checked when it is opened.
/// `key` is the source metadata key, named in errors.
pub(super) fn array_document(spec: ArraySpec, key: &str) -> Result<(ArrayMetadata, Vec<u8>), PlanError> {
    let rank = spec.shape.len();
    let mut meta = ArrayMetadata::new(spec.dtype.data_type.clone(), spec.shape, spec.chunks);
    let mut codecs = Vec::new();
    if spec.f_order && rank > 1 {
        // An F-order chunk is the C-order chunk of the reversed shape: the transpose codec with
        // the reversed dimension order encodes exactly those bytes.
        codecs.push(NamedConfig::from(Codec::Transpose { order: (0..rank).rev().collect() }));
    }
    if spec.f_order && rank > 1 && spec.dtype.data_type.is_variable_length() {
        return Err(PlanError::unsupported(
            key,
            "order",
            "\"F\"",
            "variable-length items in F order have no v3 codec chain (transpose moves fixed-size elements)",
        ));
    }
    codecs.extend(spec.filters.array);
    codecs.push(
        match (crate::codec::vlen::codec_name(&spec.dtype.data_type), spec.filters.endian.unwrap_or(spec.dtype.endian))
        {
            (Some(vlen), _) => NamedConfig::with_configuration(vlen, Map::new()),
            (None, endian) => NamedConfig::from(Codec::Bytes { endian: endian.map(super::dtype::Endian::typed) }),
        },
    );
    codecs.extend(spec.filters.bytes);
    codecs.extend(spec.compressor);
    meta.codecs = codecs;
    meta.chunk_key_encoding = spec.encoding;
    meta.fill_value = spec.fill_value;
    meta.attributes = spec.attributes;
    meta.dimension_names = spec.dimension_names;
    meta.check().map_err(|e| PlanError::metadata(key, e))?;
    codec_chain(&meta).map_err(|source| PlanError::InvalidCodecs { key: key.to_owned(), source })?;
    let bytes = meta.to_json_bytes();
    Ok((meta, bytes))
}

/// The v3 group document with these attributes.
pub(super) fn group_document(attributes: Map<String, Value>) -> Vec<u8> {
    GroupMetadata::new(attributes).to_json_bytes()
}

/// A document that must be a JSON object.
pub(super) fn object<'a>(value: &'a Value, key: &str) -> Result<&'a Map<String, Value>, PlanError> {
    value.as_object().ok_or_else(|| PlanError::metadata(key, wrong_type("(document)", "an object", value)))
}

/// A member that must be present.
pub(super) fn required<'a>(obj: &'a Map<String, Value>, field: &str, key: &str) -> Result<&'a Value, PlanError> {
    obj.get(field).ok_or_else(|| PlanError::metadata(key, MetadataError::MissingField { field: field.to_owned() }))
}

/// A shape and a chunk shape of the same rank, with positive chunk lengths (older layouts never
/// write a zero chunk length, and v3 readers refuse one).
pub(super) fn shape_and_chunks(
    shape: &Value,
    chunks: &Value,
    fields: (&str, &str),
    key: &str,
) -> Result<(Vec<u64>, Vec<u64>), PlanError> {
    let shape = as_u64_list(shape, fields.0).map_err(|e| PlanError::metadata(key, e))?;
    let chunks = as_u64_list(chunks, fields.1).map_err(|e| PlanError::metadata(key, e))?;
    if chunks.len() != shape.len() {
        return Err(PlanError::metadata(
            key,
            invalid(fields.1, format!("{} chunk lengths for {} dimensions", chunks.len(), shape.len())),
        ));
    }
    if let Some(i) = chunks.iter().position(|&c| c == 0) {
        return Err(PlanError::metadata(key, invalid(fields.1, format!("chunk length 0 on dimension {i}"))));
    }
    Ok((shape, chunks))
}

/// `order` / `chunk_memory_layout`: whether chunks are in F order.
pub(super) fn f_order(value: &Value, field: &str, key: &str) -> Result<bool, PlanError> {
    match value {
        Value::String(s) if s == "C" => Ok(false),
        Value::String(s) if s == "F" => Ok(true),
        Value::String(_) => Err(PlanError::metadata(key, invalid(field, "must be \"C\" or \"F\""))),
        other => Err(PlanError::metadata(key, wrong_type(field, "\"C\" or \"F\"", other))),
    }
}

/// A draft `filters` member: null or empty, as no draft filter is converted (v2 filters are,
/// by `filters::from_v2`).
pub(super) fn no_filters(value: Option<&Value>, key: &str) -> Result<(), PlanError> {
    match value {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Array(list)) if list.is_empty() => Ok(()),
        Some(Value::Array(list)) => {
            let id = list[0].get("id").map_or_else(|| crate::metadata::json::describe(&list[0]), |id| id.to_string());
            Err(PlanError::unsupported(key, "filters", id, "filters are not converted to v3 codecs"))
        }
        Some(other) => Err(PlanError::metadata(key, wrong_type("filters", "a list or null", other))),
    }
}
