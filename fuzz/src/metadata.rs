//! Target `metadata`: the metadata documents of every layout zarrdb reads, parsed and planned as
//! an import plans them, then opened through the v3 view (`ConvertedStore`) an import writes.
//!
//! Input: a layout byte, then up to four documents separated by NUL bytes:
//! - `3`: Zarr v3, `zarr.json` of the root, of `/a` and of `/a/b`. Each parsed document also
//!   survives a round trip: written back and parsed again, it is the same document.
//! - `2`: Zarr v2 array, `.zarray` and `.zattrs` of the root.
//! - `g`: Zarr v2 group, `.zgroup` and `.zattrs` of the root, `a/.zarray`, and `.zmetadata`
//!   (consolidated metadata).
//! - `1`: Zarr v1, `meta` and `attrs`.
//! - anything else: the 2020 draft, the entry point `zarr.json` (a default one when empty),
//!   `meta/root.group.json`, `meta/root/a.array.json` and `meta/root/a/b.group.json`.

use std::sync::Arc;

use zarrdb::metadata::NodeMetadata;
use zarrdb::store::WritableStore;
use zarrdb::transfer::ConvertedStore;
use zarrdb::{Group, MemoryStore, Node, Store};

const DRAFT_ENTRY: &[u8] = br#"{"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0",
    "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_key_suffix": ".json",
    "extensions": []}"#;

/// The keys each layout's documents go to, in input order.
fn keys(layout: u8) -> &'static [&'static str] {
    match layout {
        b'3' => &["zarr.json", "a/zarr.json", "a/b/zarr.json"],
        b'2' => &[".zarray", ".zattrs"],
        b'g' => &[".zgroup", ".zattrs", "a/.zarray", ".zmetadata"],
        b'1' => &["meta", "attrs"],
        _ => &["zarr.json", "meta/root.group.json", "meta/root/a.array.json", "meta/root/a/b.group.json"],
    }
}

/// One input.
pub fn run(data: &[u8]) {
    let Some((&layout, rest)) = data.split_first() else { return };
    let keys = keys(layout);
    let docs = crate::split_nul(rest, keys.len());
    let store = MemoryStore::new();
    for (key, doc) in keys.iter().zip(&docs) {
        let doc = match (layout, *key) {
            (b'3' | b'2' | b'g' | b'1', _) => *doc,
            (_, "zarr.json") if doc.is_empty() => DRAFT_ENTRY,
            _ => *doc,
        };
        if layout == b'3' {
            round_trip(doc);
        }
        if !doc.is_empty() {
            store.set(key, doc).expect("a memory store takes any valid key");
        }
    }
    let store: Arc<dyn Store> = Arc::new(store);
    if layout == b'3' {
        open_all(&store, &["/", "/a", "/a/b"]);
    }
    // The import's view: every layout, v3 included, is planned and converted.
    let Ok(converted) = ConvertedStore::over(store) else { return };
    let converted: Arc<dyn Store> = Arc::new(converted);
    if let Ok(keys) = converted.list() {
        for key in keys {
            let _ = converted.get(&key);
        }
    }
    open_all(&converted, &["/", "/a", "/a/b"]);
}

/// A document that parses is the same document after `to_json` and a second parse.
fn round_trip(doc: &[u8]) {
    let Ok(parsed) = NodeMetadata::from_json(doc) else { return };
    let written = serde_json::to_vec(&parsed.to_json()).expect("a JSON value serializes");
    let again = NodeMetadata::from_json(&written).unwrap_or_else(|e| {
        panic!("a document written by to_json does not parse: {e}\n{}", String::from_utf8_lossy(&written))
    });
    assert_eq!(again.to_json(), parsed.to_json(), "a document changed on a round trip");
}

/// Open each node at `paths`: a group lists its children, an array of modest size reads its
/// first chunk and its first element (the fill value: no chunk is stored).
fn open_all(store: &Arc<dyn Store>, paths: &[&str]) {
    for path in paths {
        match Node::open(store.clone(), path) {
            Ok(Node::Array(array)) => {
                let origin = vec![0; array.shape().len()];
                let first: Vec<u64> = array.shape().iter().zip(array.chunk_shape()).map(|(&s, &c)| s.min(c)).collect();
                if crate::readable(&array, &first) {
                    let _ = array.read_region_bytes(&origin, &first);
                }
                let one: Vec<u64> = first.iter().map(|&d| d.min(1)).collect();
                if crate::readable(&array, &one) {
                    let _ = array.read_region_bytes(&origin, &one);
                }
            }
            Ok(Node::Group(group)) => {
                let _ = group.children();
                let _ = Group::open(store.clone(), path).map(|g| g.attributes());
            }
            Err(_) => {}
        }
    }
}
