//! The 2020 draft of the v3 protocol (zarr-python 2's experimental v3): an entry point
//! `zarr.json`, metadata under `meta/root...`, chunks under `data/root/<path>/c<i><sep><j>...`.
//! Arrays become v3 arrays with the default chunk key encoding and the draft's separator, so a
//! chunk key changes only by the separator after the `c` (`c0/1` -> `c/0/1`). v3.0 readers know no
//! implicit groups, so every group, implied ones included, gets a document.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::convert::{
    array_document, f_order, group_document, no_filters, object, required, shape_and_chunks, ArraySpec,
};
use super::tree::{assign_chunks, implied_groups, node_entries, ArraySource, SourceKeys};
use super::{compressor, dtype, fill, prefix, Layout, Paths, Plan, PlanError, Source, CONVERTED};
use crate::metadata::json::{describe, invalid, wrong_type};
use crate::metadata::{ChunkKeyEncoding, Separator};

/// The draft's protocol URI, the only `zarr_format` (and `metadata_encoding`) it defines.
const CORE_3_0: &str = "https://purl.org/zarr/spec/protocol/core/3.0";

pub(super) fn plan(source: &mut Source<'_>, entry: Value) -> Result<Plan, PlanError> {
    let keys = source.keys;
    let suffix = entry_point(&entry)?;
    let mut plan = super::empty(Layout::Draft2020);
    let mut claimed: HashSet<String> = ["zarr.json".to_owned()].into_iter().collect();
    plan.skipped.push(("zarr.json".into(), CONVERTED.into()));
    let (mut array_keys, mut group_keys) = (Paths::new(), Paths::new());
    for key in keys.iter().filter(|k| k.starts_with("meta/")) {
        claimed.insert(key.clone());
        match metadata_key(key, &suffix) {
            Some((path, true)) => array_keys.insert(path.to_owned(), key.clone()),
            Some((path, false)) => group_keys.insert(path.to_owned(), key.clone()),
            None => {
                plan.skipped.push((key.clone(), "not a metadata document of the 2020 draft".into()));
                continue;
            }
        };
        plan.skipped.push((key.clone(), CONVERTED.into()));
    }
    let nodes = node_entries(&array_keys, &group_keys)?;
    let mut implied = implied_groups(&nodes)?;
    if !nodes.contains_key("") {
        implied.insert(String::new());
    }

    let mut arrays = Vec::new();
    for (path, key) in &array_keys {
        let (_, value) = source.json(key)?;
        let (spec, sep) = array_spec(&value, key)?;
        let (meta, bytes) = array_document(spec, key)?;
        arrays.push(ArraySource {
            meta_key: key.clone(),
            src_prefix: format!("data/root/{}", prefix(path)),
            dst_prefix: prefix(path),
            src_keys: SourceKeys::Draft(sep),
            dst_encoding: meta.chunk_key_encoding,
            grid: meta.grid_shape(),
        });
        plan.metadata.push((format!("{}zarr.json", prefix(path)), bytes));
    }
    for (path, key) in &group_keys {
        let (_, value) = source.json(key)?;
        let attributes = attributes(object(&value, key)?, key)?;
        plan.metadata.push((format!("{}zarr.json", prefix(path)), group_document(attributes)));
    }
    for path in &implied {
        plan.metadata.push((format!("{}zarr.json", prefix(path)), group_document(Map::new())));
    }
    assign_chunks(keys, &claimed, &arrays, &mut plan);
    Ok(plan)
}

/// Check the entry point and return the metadata key suffix.
fn entry_point(entry: &Value) -> Result<String, PlanError> {
    let key = "zarr.json";
    let obj = object(entry, key)?;
    for field in ["zarr_format", "metadata_encoding"] {
        match obj.get(field) {
            None if field == "metadata_encoding" => {}
            Some(Value::String(uri)) if uri == CORE_3_0 => {}
            Some(other) => {
                return Err(PlanError::unsupported(key, field, describe(other), format!("only {CORE_3_0} is known")))
            }
            None => {
                return Err(PlanError::metadata(key, crate::error::MetadataError::MissingField { field: field.into() }))
            }
        }
    }
    extensions(obj, key)?;
    match obj.get("metadata_key_suffix") {
        None => Ok(".json".to_owned()),
        Some(Value::String(suffix)) => Ok(suffix.clone()),
        Some(other) => Err(PlanError::metadata(key, wrong_type("metadata_key_suffix", "a string", other))),
    }
}

/// An extension that must be understood changes what the data means, and zarrdb knows none.
fn extensions(obj: &Map<String, Value>, key: &str) -> Result<(), PlanError> {
    let list = match obj.get("extensions") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(list)) => list,
        Some(other) => return Err(PlanError::metadata(key, wrong_type("extensions", "a list", other))),
    };
    for (i, ext) in list.iter().enumerate() {
        if ext.get("must_understand") != Some(&Value::Bool(false)) {
            let name = ext.get("extension").map_or_else(|| describe(ext), describe);
            return Err(PlanError::unsupported(
                key,
                &format!("extensions[{i}]"),
                name,
                "an extension that must be understood",
            ));
        }
    }
    Ok(())
}

/// `meta/root.array.json` -> `("", true)`, `meta/root/a/b.group.json` -> `("a/b", false)`.
fn metadata_key<'k>(key: &'k str, suffix: &str) -> Option<(&'k str, bool)> {
    let stem = key.strip_prefix("meta/root")?.strip_suffix(suffix)?;
    let (path, is_array) = match (stem.strip_suffix(".array"), stem.strip_suffix(".group")) {
        (Some(path), _) => (path, true),
        (None, Some(path)) => (path, false),
        (None, None) => return None,
    };
    match path {
        "" => Some(("", is_array)),
        _ => path.strip_prefix('/').filter(|p| !p.is_empty()).map(|p| (p, is_array)),
    }
}

fn attributes(obj: &Map<String, Value>, key: &str) -> Result<Map<String, Value>, PlanError> {
    match obj.get("attributes") {
        None => Ok(Map::new()),
        Some(value) => fill::attributes(value.clone(), key)
            .map_err(|_| PlanError::metadata(key, wrong_type("attributes", "an object", value))),
    }
}

fn array_spec(value: &Value, key: &str) -> Result<(ArraySpec, Separator), PlanError> {
    let obj = object(value, key)?;
    extensions(obj, key)?;
    no_filters(obj.get("filters"), key)?;
    let grid = required(obj, "chunk_grid", key)?;
    let grid = grid.as_object().ok_or_else(|| PlanError::metadata(key, wrong_type("chunk_grid", "an object", grid)))?;
    match grid.get("type") {
        Some(Value::String(t)) if t == "regular" && !grid.contains_key("extension") => {}
        Some(other) => {
            return Err(PlanError::unsupported(
                key,
                "chunk_grid.type",
                describe(other),
                "only regular chunk grids are converted",
            ))
        }
        None => {
            return Err(PlanError::metadata(
                key,
                crate::error::MetadataError::MissingField { field: "chunk_grid.type".into() },
            ))
        }
    }
    let sep = match grid.get("separator") {
        None => Separator::Slash,
        Some(Value::String(s)) if s == "/" => Separator::Slash,
        Some(Value::String(s)) if s == "." => Separator::Dot,
        Some(other) => {
            return Err(PlanError::metadata(
                key,
                invalid("chunk_grid.separator", format!("must be \"/\" or \".\", found {}", describe(other))),
            ))
        }
    };
    let (shape, chunks) = shape_and_chunks(
        required(obj, "shape", key)?,
        required(grid, "chunk_shape", key)?,
        ("shape", "chunk_grid.chunk_shape"),
        key,
    )?;
    let dtype = dtype::from_draft(required(obj, "data_type", key)?, key)?;
    let layout = required(obj, "chunk_memory_layout", key)?;
    if layout.is_object() {
        return Err(PlanError::unsupported(
            key,
            "chunk_memory_layout",
            describe(layout),
            "extension memory layouts are not converted",
        ));
    }
    let f_order = f_order(layout, "chunk_memory_layout", key)?;
    let compressor = compressor::from_draft(obj.get("compressor"), dtype.clone(), key)?;
    let fill_value = fill::draft(required(obj, "fill_value", key)?, dtype.data_type.clone(), key)?;
    let dimension_names = match obj.get("dimension_names") {
        None | Some(Value::Null) => None,
        Some(Value::Array(names)) => Some(
            names
                .iter()
                .enumerate()
                .map(|(i, name)| match name {
                    Value::Null => Ok(None),
                    Value::String(s) => Ok(Some(s.clone())),
                    other => Err(PlanError::metadata(
                        key,
                        wrong_type(&format!("dimension_names[{i}]"), "a string or null", other),
                    )),
                })
                .collect::<Result<_, _>>()?,
        ),
        Some(other) => return Err(PlanError::metadata(key, wrong_type("dimension_names", "a list", other))),
    };
    let spec = ArraySpec {
        shape,
        chunks,
        dtype,
        f_order,
        compressor,
        filters: Default::default(),
        fill_value,
        encoding: ChunkKeyEncoding::Default(sep),
        attributes: attributes(obj, key)?,
        dimension_names,
    };
    Ok((spec, sep))
}
