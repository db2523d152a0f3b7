//! What every layout shares once its metadata is read: the node tree (no node inside an array,
//! groups implied by descendants) and the assignment of the remaining keys to arrays' chunks.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::{prefix, unclaimed_reason, Plan, PlanError};
use crate::metadata::{ChunkKeyEncoding, Separator};

/// A node found in the source, by its path relative to the hierarchy root.
pub(super) struct NodeEntry {
    pub is_array: bool,
    /// The source key of its metadata, for errors.
    pub meta_key: String,
}

/// Check that no node lies inside an array, and return the paths (root included) that have
/// nodes below them but no node of their own.
/// The nodes of a legacy layout, by path, from its array and group metadata keys (path -> key);
/// a path with both is an error.
pub(super) fn node_entries(
    array_keys: &std::collections::HashMap<String, String>,
    group_keys: &std::collections::HashMap<String, String>,
) -> Result<BTreeMap<String, NodeEntry>, PlanError> {
    let mut nodes = BTreeMap::new();
    for (path, key) in array_keys {
        if let Some(group) = group_keys.get(path) {
            return Err(PlanError::ConflictingNodes { path: path.clone(), first: key.clone(), second: group.clone() });
        }
        nodes.insert(path.clone(), NodeEntry { is_array: true, meta_key: key.clone() });
    }
    for (path, key) in group_keys {
        nodes.insert(path.clone(), NodeEntry { is_array: false, meta_key: key.clone() });
    }
    Ok(nodes)
}

pub(super) fn implied_groups(nodes: &BTreeMap<String, NodeEntry>) -> Result<BTreeSet<String>, PlanError> {
    let mut implied = BTreeSet::new();
    for (path, node) in nodes {
        for ancestor in ancestors(path) {
            match nodes.get(ancestor) {
                Some(parent) if parent.is_array => {
                    return Err(PlanError::NodeInsideArray {
                        key: node.meta_key.clone(),
                        array: parent.meta_key.clone(),
                    })
                }
                Some(_) => {}
                None => {
                    implied.insert(ancestor.to_owned());
                }
            }
        }
    }
    Ok(implied)
}

/// The proper ancestors of a node path, root (`""`) first: `"a/b/c"` -> `"", "a", "a/b"`.
pub(super) fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let root = (!path.is_empty()).then_some("");
    root.into_iter().chain(path.match_indices('/').map(move |(i, _)| &path[..i]))
}

/// How the chunk keys of a source array name their coordinates.
#[derive(Clone, Copy, Debug)]
pub(super) enum SourceKeys {
    /// A v3 chunk key encoding (also v2 and v1 keys, through the `v2` encoding).
    Encoding(ChunkKeyEncoding),
    /// The 2020 draft: `c` then the coordinates joined by the separator (`c0/1`, `c` for 0-d).
    Draft(Separator),
}

impl SourceKeys {
    fn decode(self, key: &str, rank: usize) -> Option<Vec<u64>> {
        match self {
            SourceKeys::Encoding(encoding) => encoding.decode(key, rank),
            SourceKeys::Draft(sep) => {
                let rest = key.strip_prefix('c')?;
                if rank == 0 {
                    return rest.is_empty().then(Vec::new);
                }
                ChunkKeyEncoding::V2(sep).decode(rest, rank)
            }
        }
    }
}

/// An array whose chunks are copied.
pub(super) struct ArraySource {
    /// The source key of its metadata, named in skip reasons.
    pub meta_key: String,
    /// Where its chunk keys start in the source (`""` for a root array).
    pub src_prefix: String,
    /// Where they go in the destination.
    pub dst_prefix: String,
    pub src_keys: SourceKeys,
    pub dst_encoding: ChunkKeyEncoding,
    /// Number of chunks along each dimension.
    pub grid: Vec<u64>,
}

impl ArraySource {
    /// An array whose chunk keys stay as they are (v3, v2, v1).
    pub fn same_keys(meta_key: &str, path: &str, encoding: ChunkKeyEncoding, grid: Vec<u64>) -> ArraySource {
        ArraySource {
            meta_key: meta_key.to_owned(),
            src_prefix: prefix(path),
            dst_prefix: prefix(path),
            src_keys: SourceKeys::Encoding(encoding),
            dst_encoding: encoding,
            grid,
        }
    }
}

/// Give every key not in `claimed` a place: a chunk of the array whose prefix holds it (when the
/// rest of the key is an in-grid chunk key of that array), or a skip with the reason.
pub(super) fn assign_chunks(keys: &[String], claimed: &HashSet<String>, arrays: &[ArraySource], plan: &mut Plan) {
    let by_prefix: HashMap<&str, &ArraySource> = arrays.iter().map(|a| (a.src_prefix.as_str(), a)).collect();
    for key in keys.iter().filter(|k| !claimed.contains(*k)) {
        // Arrays never nest (checked before), so the first prefix found is the only owner.
        let owner = key
            .match_indices('/')
            .map(|(i, _)| &key[..=i])
            .chain(std::iter::once(""))
            .find_map(|p| by_prefix.get(p).copied());
        let Some(array) = owner else {
            plan.skipped.push((key.clone(), unclaimed_reason(key)));
            continue;
        };
        let rest = &key[array.src_prefix.len()..];
        match array.src_keys.decode(rest, array.grid.len()) {
            Some(coords) if coords.iter().zip(&array.grid).all(|(c, n)| c < n) => {
                let dst = format!("{}{}", array.dst_prefix, array.dst_encoding.encode(&coords));
                plan.chunks.push((key.clone(), dst));
            }
            Some(coords) => plan.skipped.push((
                key.clone(),
                format!("chunk {coords:?} is outside the chunk grid {:?} of array \"{}\"", array.grid, array.meta_key),
            )),
            None if super::is_stray_file(key) => plan.skipped.push((key.clone(), unclaimed_reason(key))),
            None => plan.skipped.push((key.clone(), format!("not a chunk key of array \"{}\"", array.meta_key))),
        }
    }
}
