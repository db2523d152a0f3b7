//! The import plan: which layout a source holds (Zarr v3, v2, v1, 2020 draft), the v3 metadata of
//! each node, and which source key each chunk is copied from.
//!
//! The plan reads metadata only and never a chunk: chunks are copied byte for byte, because every
//! older layout's chunk encoding has a v3 codec chain that reads the same bytes (the v2 `order: F`
//! becomes a transpose, v2 `zlib` becomes `numcodecs.zlib`, and chunk keys keep their names where
//! a v3 chunk key encoding can express them).
//!
//! Which layout a source holds, in order:
//! 1. a root `zarr.json` whose `zarr_format` is a string: the 2020 draft; any other `zarr.json`,
//!    `.zarray` or `.zgroup` beside it is [`PlanError::MixedLayouts`];
//! 2. any `zarr.json`: Zarr v3. A v2 `.zarray`/`.zgroup`/`.zattrs` in the same folder as a
//!    `zarr.json` is skipped (the v3 document wins, as when zarr-python 3 wrote v3 metadata beside
//!    the v2 one); a v2 node in a folder without one is [`PlanError::MixedLayouts`];
//! 3. any `.zarray` or `.zgroup`: Zarr v2;
//! 4. a root `meta` key: Zarr v1;
//! 5. otherwise [`PlanError::NoHierarchy`].

mod compressor;
mod convert;
mod dims;
mod draft;
pub(super) mod dtype;
mod fill;
mod filters;
mod select;
mod tree;
mod v1;
mod v2;
mod v3;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_draft;
#[cfg(test)]
mod tests_v2;
#[cfg(test)]
mod tests_v3;

use std::collections::HashMap;

use serde_json::Value;

pub use crate::error::PlanError;
pub(crate) use select::Select;

/// The metadata layout a source was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Zarr v3 (`zarr.json` per node); documents are copied as they are.
    V3,
    /// Zarr v2 (`.zarray`, `.zgroup`, `.zattrs`).
    V2,
    /// Zarr v1: one array, `meta` and `attrs` at the root.
    V1,
    /// The 2020 draft of the v3 protocol (`zarr.json` entry point, `meta/root/...`, `data/root/...`).
    Draft2020,
}

impl Layout {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Layout::V3 => "Zarr v3",
            Layout::V2 => "Zarr v2",
            Layout::V1 => "Zarr v1",
            Layout::Draft2020 => "Zarr v3 2020 draft",
        }
    }
}

/// What an import writes, decided from the source's keys and metadata alone.
#[derive(Debug)]
pub(crate) struct Plan {
    pub layout: Layout,
    /// v3 metadata documents to write: (destination key relative to the import root, e.g.
    /// "zarr.json", "a/b/zarr.json"; bytes). Every explicit node including the root. Sorted by key.
    pub metadata: Vec<(String, Vec<u8>)>,
    /// Chunk (or shard) values copied byte for byte: (source key, destination key relative to the
    /// import root). Sorted by destination key.
    pub chunks: Vec<(String, String)>,
    /// Source keys that are not copied, with the reason (stray files such as .DS_Store, keys that
    /// are not a chunk of any array, out-of-grid chunk keys, metadata keys superseded by
    /// conversion). Sorted by source key.
    pub skipped: Vec<(String, String)>,
    /// v3 only: node paths (relative to the import root, `""` for the root itself) that have
    /// nodes below them but no `zarr.json`. They stay implicit; no document is invented. Sorted.
    pub implicit_groups: Vec<String>,
    /// Source keys imported with a change the user should know of, and what it was (an
    /// `_ARRAY_DIMENSIONS` attribute that could not become `dimension_names`). Sorted.
    pub warnings: Vec<(String, String)>,
    /// Source keys whose consolidated metadata was left out: v3 group documents written without
    /// their `consolidated_metadata`, a v2 `.zmetadata`. Sorted.
    pub consolidated: Vec<String>,
    /// Nodes left out because their metadata cannot be imported (only with
    /// [`Select::skip_unreadable`]), with the error; their subtrees are left out too. Sorted.
    pub skipped_nodes: Vec<(String, std::sync::Arc<PlanError>)>,
    /// Nodes left out by an exclusion pattern, with their subtrees (the topmost ones). Sorted.
    pub excluded: Vec<String>,
}

/// Plan the import of a source holding `keys` (every key of the source, relative to the
/// hierarchy root; validated by the caller). `read` fetches one key's bytes; only metadata keys
/// are read. A failed read is returned as it is, so the caller chooses its error (normally
/// [`PlanError::Read`]).
#[cfg(test)]
pub(crate) fn plan(
    keys: &[String],
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>, PlanError>,
) -> Result<Plan, PlanError> {
    plan_selected(keys, read, &Select::default())
}

/// [`plan`], leaving out what `select` says (`select.rs`).
pub(crate) fn plan_selected(
    keys: &[String],
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>, PlanError>,
    select: &Select,
) -> Result<Plan, PlanError> {
    let detected = detect(&mut Source { keys, read, skip_unreadable: false, failed: Vec::new() })?;
    let excluded = select::exclude(keys, select, detected.layout())?;
    let mut source = Source { keys: &excluded.kept, read, skip_unreadable: select.skip_unreadable, failed: Vec::new() };
    let mut plan = match detected {
        Detected::Draft(entry) => draft::plan(&mut source, entry)?,
        Detected::V3 => v3::plan(&mut source)?,
        Detected::V2 => v2::plan(&mut source)?,
        Detected::V1 => v1::plan(&mut source)?,
    };
    select::prune(&mut plan, std::mem::take(&mut source.failed));
    plan.skipped.extend(excluded.skipped);
    plan.excluded = excluded.nodes;
    plan.metadata.sort_by(|a, b| a.0.cmp(&b.0));
    plan.chunks.sort_by(|a, b| a.1.cmp(&b.1));
    plan.skipped.sort();
    plan.implicit_groups.sort();
    plan.warnings.sort();
    plan.consolidated.sort();
    plan.skipped_nodes.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(plan)
}

/// When every metadata key sits below one top-level folder and there is no top-level file (a zip
/// made from the folder's parent), that folder's prefix, e.g. `"data.zarr/"`. The folder must
/// itself hold an entry point (`zarr.json`, `.zgroup`, `.zarray`, v1 `meta`), so a v2 hierarchy
/// whose root group is implied by one child group keeps its root.
pub(crate) fn find_root(keys: &[String]) -> Option<String> {
    if keys.iter().any(|k| !k.contains('/')) {
        return None;
    }
    let mut folder: Option<&str> = None;
    // `meta` (Zarr v1) counts too: nodes never have that name as a file, only as a folder.
    for key in keys.iter().filter(|k| is_metadata_name(last_segment(k)) || last_segment(k) == "meta") {
        let first = key.split('/').next().unwrap_or_default();
        match folder {
            None => folder = Some(first),
            Some(f) if f != first => return None,
            Some(_) => {}
        }
    }
    let folder = folder?;
    let entry_point = ["zarr.json", ".zgroup", ".zarray", "meta"]
        .iter()
        .any(|name| keys.iter().any(|k| k.strip_prefix(folder).and_then(|r| r.strip_prefix('/')) == Some(name)));
    entry_point.then(|| format!("{folder}/"))
}

fn is_metadata_name(name: &str) -> bool {
    matches!(name, "zarr.json" | ".zarray" | ".zgroup" | ".zattrs")
}

/// The keys and the reader, passed to each layout's planner.
pub(super) struct Source<'a> {
    keys: &'a [String],
    read: &'a mut dyn FnMut(&str) -> Result<Vec<u8>, PlanError>,
    /// Whether a node whose metadata cannot be imported is set aside in `failed` (with its
    /// path) instead of failing the plan.
    skip_unreadable: bool,
    failed: Vec<(String, PlanError)>,
}

impl Source<'_> {
    /// A node's planning result: its value, or with `skip_unreadable` `None` after setting the
    /// error aside. A failed read of the source is never set aside: it is no property of a node.
    fn tolerate<T>(&mut self, path: &str, result: Result<T, PlanError>) -> Result<Option<T>, PlanError> {
        match result {
            Ok(value) => Ok(Some(value)),
            Err(e @ PlanError::Read { .. }) => Err(e),
            Err(e) if self.skip_unreadable => {
                self.failed.push((path.to_owned(), e));
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    fn read(&mut self, key: &str) -> Result<Vec<u8>, PlanError> {
        (self.read)(key)
    }

    /// A metadata key's bytes and its JSON.
    fn json(&mut self, key: &str) -> Result<(Vec<u8>, Value), PlanError> {
        let bytes = self.read(key)?;
        crate::metadata::json::check_size(bytes.len() as u64)
            .map_err(|source| PlanError::InvalidMetadata { key: key.to_owned(), source })?;
        let value =
            serde_json::from_slice(&bytes).map_err(|source| PlanError::InvalidJson { key: key.to_owned(), source })?;
        Ok((bytes, value))
    }
}

enum Detected {
    /// The 2020 draft, with its entry point document.
    Draft(Value),
    V3,
    V2,
    V1,
}

impl Detected {
    fn layout(&self) -> Layout {
        match self {
            Detected::Draft(_) => Layout::Draft2020,
            Detected::V3 => Layout::V3,
            Detected::V2 => Layout::V2,
            Detected::V1 => Layout::V1,
        }
    }
}

fn detect(source: &mut Source<'_>) -> Result<Detected, PlanError> {
    let keys = source.keys;
    let first_named = |names: &[&str]| keys.iter().find(|k| names.contains(&last_segment(k))).cloned();
    if keys.iter().any(|k| k == "zarr.json") {
        let (_, entry) = source.json("zarr.json")?;
        if entry.get("zarr_format").is_some_and(Value::is_string) {
            let other = keys.iter().find(|k| *k != "zarr.json" && last_segment(k) == "zarr.json");
            if let Some(other) = other.cloned().or_else(|| first_named(&[".zarray", ".zgroup"])) {
                let other_layout = if other.ends_with("zarr.json") { Layout::V3 } else { Layout::V2 };
                return Err(mixed("zarr.json", Layout::Draft2020, other, other_layout));
            }
            return Ok(Detected::Draft(entry));
        }
    }
    if first_named(&["zarr.json"]).is_some() {
        return Ok(Detected::V3);
    }
    if first_named(&[".zarray", ".zgroup"]).is_some() {
        return Ok(Detected::V2);
    }
    if keys.iter().any(|k| k == "meta") {
        return Ok(Detected::V1);
    }
    Err(PlanError::NoHierarchy { keys: keys.len() })
}

fn mixed(first: &str, first_layout: Layout, second: String, second_layout: Layout) -> PlanError {
    PlanError::MixedLayouts {
        first: first.to_owned(),
        first_layout: first_layout.name(),
        second,
        second_layout: second_layout.name(),
    }
}

/// The last `/`-separated segment of a key.
fn last_segment(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

/// The node path of a metadata key in a node's folder: `"a/b/.zarray"` -> `"a/b"`, `".zarray"` -> `""`.
fn parent_path(key: &str) -> &str {
    key.rsplit_once('/').map_or("", |(parent, _)| parent)
}

/// The key prefix of a node path: `""` for the root, `"a/b/"` otherwise.
fn prefix(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("{path}/")
    }
}

/// A plan with nothing in it yet.
fn empty(layout: Layout) -> Plan {
    Plan {
        layout,
        metadata: Vec::new(),
        chunks: Vec::new(),
        skipped: Vec::new(),
        implicit_groups: Vec::new(),
        warnings: Vec::new(),
        consolidated: Vec::new(),
        skipped_nodes: Vec::new(),
        excluded: Vec::new(),
    }
}

/// Skip reasons shared by the layouts.
const CONVERTED: &str = "converted to zarr.json";

/// Files that operating systems and archivers leave in folders.
fn is_stray_file(key: &str) -> bool {
    let name = last_segment(key);
    matches!(name, ".DS_Store" | "Thumbs.db" | "desktop.ini") || name.starts_with("._") || key.starts_with("__MACOSX/")
}

/// Keys that no layout planner claimed: stray files and keys outside every array.
fn unclaimed_reason(key: &str) -> String {
    if is_stray_file(key) {
        "stray file left by an operating system or archiver".to_owned()
    } else {
        "not metadata and not inside any array".to_owned()
    }
}

/// `HashMap` of node path -> metadata key, as the layouts collect them.
type Paths = HashMap<String, String>;
