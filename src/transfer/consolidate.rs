//! Fresh consolidated metadata for an export: the exported root group's `zarr.json` gets a
//! `consolidated_metadata` member (metadata/consolidated.rs) holding every descendant's document
//! as it is in the export's snapshot, so readers that trust it (xarray, zarr-python) see the
//! shapes and attributes of that snapshot, never an older copy.

use std::collections::BTreeMap;

use serde_json::Value;

use super::run::Item;
use super::source::Source;
use crate::error::{Error, MetadataError};
use crate::metadata::{consolidated, NodeMetadata, METADATA_KEY};

/// The root document to write instead of the stored one, when the exported root is a group
/// (an array or an implicit group has no document to hold consolidated metadata). `items` are
/// the export's keys relative to the root.
pub(super) fn root_document(source: &dyn Source, items: &[Item]) -> Result<Option<Vec<u8>>, Error> {
    let Some(root) = items.iter().find(|i| i.to == METADATA_KEY) else { return Ok(None) };
    let mut root_doc = match document(source, root)? {
        (NodeMetadata::Group(_), Value::Object(obj)) => obj,
        _ => return Ok(None),
    };
    let mut nodes = BTreeMap::new();
    for item in items.iter().filter(|i| i.to != METADATA_KEY) {
        let Some(path) = item.to.strip_suffix("/zarr.json") else { continue };
        let (_, value) = document(source, item)?;
        nodes.insert(path.to_owned(), value);
    }
    // Folders holding nodes without a document of their own are implicit groups.
    let implicit: Vec<String> = nodes
        .keys()
        .flat_map(|path| path.match_indices('/').map(|(i, _)| path[..i].to_owned()).collect::<Vec<_>>())
        .filter(|ancestor| !nodes.contains_key(ancestor))
        .collect();
    for path in implicit {
        nodes.insert(path, consolidated::implicit_group());
    }
    // A stored member (only a raw store write can leave one) is replaced, not kept.
    root_doc.insert(consolidated::MEMBER.to_owned(), consolidated::inline(nodes));
    Ok(Some(consolidated::to_bytes(&Value::Object(root_doc))))
}

/// A stored document, checked with the crate's parser (consolidated metadata must not describe
/// a node no reader could open), and its JSON, member order kept.
fn document(source: &dyn Source, item: &Item) -> Result<(NodeMetadata, Value), Error> {
    let bytes = source.read(&item.from)?;
    let invalid = |source| Error::Metadata { key: item.from.clone(), source };
    let meta = NodeMetadata::from_json(&bytes).map_err(invalid)?;
    let mut value: Value = serde_json::from_slice(&bytes).map_err(|source| invalid(MetadataError::Json { source }))?;
    if let Some(obj) = value.as_object_mut() {
        obj.remove(consolidated::MEMBER);
    }
    Ok((meta, value))
}
