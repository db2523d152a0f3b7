//! Zarr v2: each `.zarray` becomes a v3 array document whose codecs read the v2 chunks as they are
//! (transpose for F order, bytes with the dtype's byte order, the compressor's v3 codec) and whose
//! `v2` chunk key encoding keeps the chunk keys; each `.zgroup`, and each folder holding v2 nodes
//! without one, becomes a v3 group. `.zattrs` become the nodes' attributes.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::convert::{array_document, f_order, group_document, object, required, shape_and_chunks, ArraySpec};
use super::tree::{assign_chunks, implied_groups, node_entries, ArraySource};
use super::{
    compressor, dims, dtype, fill, last_segment, parent_path, prefix, Layout, Paths, Plan, PlanError, Source, CONVERTED,
};
use crate::metadata::json::{invalid, wrong_type};
use crate::metadata::{consolidated, ChunkKeyEncoding, GroupMetadata, Separator};

pub(super) fn plan(source: &mut Source<'_>) -> Result<Plan, PlanError> {
    let keys = source.keys;
    let mut plan = super::empty(Layout::V2);
    let (mut array_keys, mut group_keys, mut attrs_keys) = (Paths::new(), Paths::new(), Paths::new());
    for key in keys {
        let paths = match last_segment(key) {
            ".zarray" => &mut array_keys,
            ".zgroup" => &mut group_keys,
            ".zattrs" => &mut attrs_keys,
            _ => continue,
        };
        paths.insert(parent_path(key).to_owned(), key.clone());
    }
    let nodes = node_entries(&array_keys, &group_keys)?;
    let implied = implied_groups(&nodes)?;

    let mut claimed = HashSet::new();
    let mut arrays = Vec::new();
    for (path, key) in &array_keys {
        let converted = convert_array(source, key, attrs_keys.get(path));
        let Some((meta, bytes, warning)) = source.tolerate(path, converted)? else { continue };
        if let Some(warning) = warning {
            plan.warnings.push((attrs_keys.get(path).unwrap_or(key).clone(), warning));
        }
        arrays.push(ArraySource::same_keys(key, path, meta.chunk_key_encoding, meta.grid_shape()));
        plan.metadata.push((format!("{}zarr.json", prefix(path)), bytes));
    }
    for (path, key) in &group_keys {
        let converted = source.json(key).and_then(|(_, value)| check_group(&value, key));
        let converted = converted.and_then(|()| attributes(source, attrs_keys.get(path)));
        let Some(attributes) = source.tolerate(path, converted)? else { continue };
        plan.metadata.push((format!("{}zarr.json", prefix(path)), group_document(attributes)));
    }
    // v3.0 readers know no implicit groups, so folders of v2 nodes become explicit groups.
    for path in &implied {
        let converted = attributes(source, attrs_keys.get(path));
        let Some(attributes) = source.tolerate(path, converted)? else { continue };
        plan.metadata.push((format!("{}zarr.json", prefix(path)), group_document(attributes)));
    }
    for key in array_keys.values().chain(group_keys.values()) {
        plan.skipped.push((key.clone(), CONVERTED.to_owned()));
        claimed.insert(key.clone());
    }
    for (path, key) in &attrs_keys {
        let reason = if nodes.contains_key(path) || implied.contains(path) {
            CONVERTED.to_owned()
        } else {
            "attributes of a folder that is no Zarr v2 node".to_owned()
        };
        plan.skipped.push((key.clone(), reason));
        claimed.insert(key.clone());
    }
    if keys.iter().any(|k| k == ".zmetadata") {
        plan.skipped
            .push((".zmetadata".into(), "Zarr v2 consolidated metadata: the nodes are converted one by one".into()));
        claimed.insert(".zmetadata".into());
        plan.consolidated.push(".zmetadata".into());
        // The root group keeps the request for consolidated metadata (an array root has none).
        if let Some((_, document)) = plan.metadata.iter_mut().find(|(key, _)| key == "zarr.json") {
            if let Ok(group) = GroupMetadata::from_json(document) {
                *document = consolidated::requesting(&group);
            }
        }
    }
    assign_chunks(keys, &claimed, &arrays, &mut plan);
    Ok(plan)
}

/// An array's v3 document from its `.zarray` and `.zattrs`, with the warning of
/// `_ARRAY_DIMENSIONS` that could not become dimension names.
fn convert_array(
    source: &mut Source<'_>,
    key: &str,
    attrs_key: Option<&String>,
) -> Result<(crate::metadata::ArrayMetadata, Vec<u8>, Option<String>), PlanError> {
    let attributes = attributes(source, attrs_key)?;
    let (_, value) = source.json(key)?;
    let mut spec = array_spec(&value, attributes, key)?;
    let warning = dims::take(&mut spec);
    if warning.is_none() && spec.dimension_names.is_some() {
        dims::keep_fill_as_mask(&mut spec, value.get("fill_value").unwrap_or(&Value::Null));
    }
    let (meta, bytes) = array_document(spec, key)?;
    Ok((meta, bytes, warning))
}

/// A `.zattrs` document, or no attributes when the node has none.
fn attributes(source: &mut Source<'_>, key: Option<&String>) -> Result<Map<String, Value>, PlanError> {
    match key {
        None => Ok(Map::new()),
        Some(key) => {
            let (_, value) = source.json(key)?;
            fill::attributes(value, key)
        }
    }
}

/// A `.zgroup` must be an object; its `zarr_format`, when given, must be 2.
fn check_group(value: &Value, key: &str) -> Result<(), PlanError> {
    match object(value, key)?.get("zarr_format") {
        None => Ok(()),
        Some(format) => zarr_format(format, key),
    }
}

fn zarr_format(value: &Value, key: &str) -> Result<(), PlanError> {
    match value.as_u64() {
        Some(2) => Ok(()),
        Some(other) => Err(PlanError::metadata(key, invalid("zarr_format", format!("must be 2, found {other}")))),
        None => Err(PlanError::metadata(key, wrong_type("zarr_format", "the integer 2", value))),
    }
}

/// The members of a `.zarray`. Members the v2 spec does not define are ignored: the spec forbids
/// them, so a writer that adds one does not change what the chunks hold.
fn array_spec(value: &Value, attributes: Map<String, Value>, key: &str) -> Result<ArraySpec, PlanError> {
    let obj = object(value, key)?;
    zarr_format(required(obj, "zarr_format", key)?, key)?;
    let (shape, chunks) =
        shape_and_chunks(required(obj, "shape", key)?, required(obj, "chunks", key)?, ("shape", "chunks"), key)?;
    let filters = obj.get("filters");
    let dtype = dtype::from_numpy(required(obj, "dtype", key)?, dtype::object_codec(filters), key)?;
    let f_order = f_order(required(obj, "order", key)?, "order", key)?;
    // An object array's first filter is its object codec, which becomes the array -> bytes codec.
    let filters =
        if dtype.data_type.is_variable_length() { dtype::after_object_codec(filters) } else { filters.cloned() };
    let filters = super::filters::from_v2(filters.as_ref(), dtype.clone(), key)?;
    let compressor = compressor::from_v2(required(obj, "compressor", key)?, dtype.clone(), key)?;
    let fill_value = fill::v2(required(obj, "fill_value", key)?, dtype.data_type.clone(), key)?;
    let sep = match obj.get("dimension_separator") {
        None | Some(Value::Null) => Separator::Dot,
        Some(Value::String(s)) if s == "." => Separator::Dot,
        Some(Value::String(s)) if s == "/" => Separator::Slash,
        Some(Value::String(_)) => {
            return Err(PlanError::metadata(key, invalid("dimension_separator", "must be \".\" or \"/\"")))
        }
        Some(other) => {
            return Err(PlanError::metadata(key, wrong_type("dimension_separator", "\".\" or \"/\"", other)))
        }
    };
    Ok(ArraySpec {
        shape,
        chunks,
        dtype,
        f_order,
        compressor,
        filters,
        fill_value,
        encoding: ChunkKeyEncoding::V2(sep),
        attributes,
        dimension_names: None,
    })
}
