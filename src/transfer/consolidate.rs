//! Fresh consolidated metadata for an export: the exported root group's `zarr.json` gets a
//! `consolidated_metadata` member (metadata/consolidated.rs) holding every descendant's document
//! as it is in the export's snapshot, so readers that trust it (xarray, zarr-python) see the
//! shapes and attributes of that snapshot, never an older copy.

use std::collections::BTreeMap;

use serde_json::Value;

use super::run::Item;
use super::source::Source;
use crate::error::Error;
use crate::metadata::{consolidated, NodeMetadata, METADATA_KEY};

/// The documents an export writes instead of the stored ones, and whether the root's holds
/// fresh consolidated metadata.
pub(super) struct Documents {
    /// (destination key, bytes), to be written last like every document.
    pub(super) replaced: Vec<(String, Vec<u8>)>,
    /// Whether the root group's document carries fresh consolidated metadata.
    pub(super) consolidated: bool,
}

/// With `consolidate`, the root group's document gets consolidated metadata of every document
/// exported (an array or an implicit group at the root has no document to hold it). Every other
/// group document stored with a consolidated member (`RawAccess` keeps an empty one as a request
/// for consolidation) is written without it: a reader would trust an empty or stale copy. `items`
/// are the export's keys relative to the root.
pub(super) fn documents(source: &dyn Source, items: &[Item], consolidate: bool) -> Result<Documents, Error> {
    let mut replaced = Vec::new();
    let mut nodes = BTreeMap::new();
    let mut root = None;
    for item in items {
        let path = match item.to.strip_suffix(METADATA_KEY) {
            Some("") => "",
            Some(folder) => match folder.strip_suffix('/') {
                Some(path) => path,
                None => continue,
            },
            None => continue,
        };
        let bytes = source.read(&item.from)?;
        let (metadata, value, had_member) =
            consolidated::entry(&bytes).map_err(|source| Error::Metadata { key: item.from.clone(), source })?;
        let is_group = matches!(metadata, NodeMetadata::Group(_));
        if path.is_empty() {
            root = Some((is_group, value, had_member));
            continue;
        }
        if is_group && had_member {
            replaced.push((item.to.clone(), consolidated::to_bytes(&value)));
        }
        if consolidate {
            nodes.insert(path.to_owned(), value);
        }
    }
    let mut consolidated_root = false;
    if let Some((true, Value::Object(mut document), had_member)) = root {
        if consolidate {
            consolidated::add_implicit_groups(&mut nodes);
            document.insert(consolidated::MEMBER.to_owned(), consolidated::inline(nodes));
            consolidated_root = true;
        }
        if consolidate || had_member {
            replaced.push((METADATA_KEY.to_owned(), consolidated::to_bytes(&Value::Object(document))));
        }
    }
    Ok(Documents { replaced, consolidated: consolidated_root })
}
