//! Zarr v3: every `zarr.json` is parsed with the crate's own parser (and each array's codec chain
//! built), then copied byte for byte, so an export of the import gives back the same documents;
//! only a group document holding `consolidated_metadata` is written with an empty member instead
//! (a request for it, `metadata/consolidated.rs`).

use std::collections::{BTreeMap, HashSet};

use super::tree::{assign_chunks, implied_groups, ArraySource, NodeEntry};
use super::{empty, last_segment, mixed, parent_path, Layout, Paths, Plan, PlanError, Source};
use crate::array::codec_chain;
use crate::metadata::{consolidated, NodeMetadata};

pub(super) fn plan(source: &mut Source<'_>) -> Result<Plan, PlanError> {
    let keys = source.keys;
    let mut plan = empty(Layout::V3);
    let mut nodes = BTreeMap::new();
    let mut arrays = Vec::new();
    let mut claimed = HashSet::new();
    for key in keys.iter().filter(|k| last_segment(k) == "zarr.json") {
        let path = parent_path(key);
        let read = read_node(source, key);
        let Some((meta, bytes, had_consolidated)) = source.tolerate(path, read)? else { continue };
        if had_consolidated {
            plan.consolidated.push(key.clone());
        }
        if let NodeMetadata::Array(meta) = &meta {
            arrays.push(ArraySource::same_keys(key, path, meta.chunk_key_encoding, meta.grid_shape()));
        }
        nodes.insert(
            path.to_owned(),
            NodeEntry { is_array: matches!(meta, NodeMetadata::Array(_)), meta_key: key.clone() },
        );
        plan.metadata.push((key.clone(), bytes));
        claimed.insert(key.clone());
    }
    supersede_v2(keys, &nodes, &mut plan, &mut claimed)?;
    plan.implicit_groups = implied_groups(&nodes)?.into_iter().collect();
    assign_chunks(keys, &claimed, &arrays, &mut plan);
    Ok(plan)
}

/// A node's document, parsed (and for an array, its codec chain built), the bytes to write, and
/// whether it held consolidated metadata.
fn read_node(source: &mut Source<'_>, key: &str) -> Result<(NodeMetadata, Vec<u8>, bool), PlanError> {
    let (mut bytes, value) = source.json(key)?;
    let meta = NodeMetadata::from_json(&bytes).map_err(|e| PlanError::metadata(key, e))?;
    let mut had_consolidated = false;
    // Consolidated metadata is never stored (metadata/consolidated.rs): the parsed group, which
    // dropped it, is written instead, with an empty member that keeps the request for it (readers
    // through `RawAccess` and exports get it afresh). Other documents stay byte for byte.
    if let (NodeMetadata::Group(group), Some(member)) = (&meta, value.get(consolidated::MEMBER)) {
        had_consolidated = !member.is_null();
        bytes = if had_consolidated { consolidated::requesting(group) } else { group.to_json_bytes() };
    }
    if let NodeMetadata::Array(meta) = &meta {
        codec_chain(meta).map_err(|source| PlanError::InvalidCodecs { key: key.to_owned(), source })?;
    }
    Ok((meta, bytes, had_consolidated))
}

/// v2 metadata in the folder of a `zarr.json` describes the same node in the older layout (as
/// left by an in-place conversion): the v3 document wins. A v2 node anywhere else would be lost
/// silently, so it is an error.
fn supersede_v2(
    keys: &[String],
    nodes: &BTreeMap<String, NodeEntry>,
    plan: &mut Plan,
    claimed: &mut HashSet<String>,
) -> Result<(), PlanError> {
    let mut v2_nodes = Paths::new();
    for key in keys {
        let name = last_segment(key);
        if !matches!(name, ".zarray" | ".zgroup" | ".zattrs") {
            continue;
        }
        match nodes.get(parent_path(key)) {
            Some(node) => {
                plan.skipped.push((key.clone(), format!("superseded by \"{}\" in the same folder", node.meta_key)));
                claimed.insert(key.clone());
            }
            None if name != ".zattrs" => {
                v2_nodes.insert(parent_path(key).to_owned(), key.clone());
            }
            None => {}
        }
    }
    if let Some((_, v2_key)) = v2_nodes.into_iter().min() {
        let v3_key = nodes.values().next().map_or_else(String::new, |n| n.meta_key.clone());
        return Err(mixed(&v3_key, Layout::V3, v2_key, Layout::V2));
    }
    Ok(())
}
