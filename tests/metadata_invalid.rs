//! Invalid `zarr.json` documents (tests/fixtures/metadata/invalid.json) must be refused when the
//! node is opened, with an error that names the offending field: the spec requires strict parsing
//! (unknown fields, unknown extensions and out-of-range fill values all mean "fail to open"), and a
//! user holding a broken hierarchy needs to know *which* member is wrong.
//!
//! Table entries: `{"name", "field", "document"}`; documents that cannot be JSON values carry their
//! bytes as `"raw"` (text) or `"raw_hex"` (bytes, e.g. invalid UTF-8) instead of `"document"`.

#[path = "common/metadata_fixtures.rs"]
mod metadata_fixtures;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use metadata_fixtures::{document_bytes, load};
use serde_json::Value;
use zarrdb::metadata::NodeMetadata;
use zarrdb::{MemoryStore, Node, Store};

fn str_of<'a>(entry: &'a Value, key: &str) -> &'a str {
    entry[key].as_str().unwrap_or_else(|| panic!("entry without {key}: {entry}"))
}

/// Open `bytes` as the root node of a fresh memory store; the error's Display on failure.
fn open_root(bytes: &[u8]) -> Result<Node, String> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    store.set("zarr.json", bytes).expect("memory store accepts zarr.json");
    Node::open(store, "/").map_err(|e| e.to_string())
}

/// One test over the whole table, reporting every failure at once so a regression in a shared
/// helper shows its full extent instead of only the first victim.
#[test]
fn every_invalid_document_is_refused_naming_its_field() {
    let table = load("invalid.json");
    assert!(table.len() >= 50, "the table should hold at least 50 documents, has {}", table.len());
    let mut failures = Vec::new();
    for entry in &table {
        let (name, field) = (str_of(entry, "name"), str_of(entry, "field"));
        match open_root(&document_bytes(entry)) {
            Ok(_) => failures.push(format!("{name}: expected an error naming {field:?}, but it unexpectedly opened")),
            Err(message) if !message.contains(field) => {
                failures.push(format!("{name}: expected an error naming {field:?}, got: {message}"))
            }
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "{} of {} invalid documents:\n{}", failures.len(), table.len(), failures.join("\n"));
}

/// Malformed input must come back as an error value, never as a panic: a panic in a library that
/// opens files from elsewhere is a crash (or an abort) for its host.
#[test]
fn invalid_documents_never_panic() {
    let mut panicked = Vec::new();
    for entry in &load("invalid.json") {
        let bytes = document_bytes(entry);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let _ = NodeMetadata::from_json(&bytes);
            let _ = open_root(&bytes);
        }));
        if outcome.is_err() {
            panicked.push(str_of(entry, "name").to_owned());
        }
    }
    assert!(panicked.is_empty(), "panicked on: {panicked:?}");
}

/// The spec's one escape hatch: an unknown member whose value is an object holding
/// `"must_understand": false` may be ignored. Ignoring must not mean dropping: a tool that rewrites
/// the metadata (e.g. to change attributes) would otherwise silently strip another tool's extension.
#[test]
fn ignorable_unknown_fields_open_and_are_kept() {
    for entry in load("valid_unknown_fields.json") {
        let name = str_of(&entry, "name");
        let document = &entry["document"];
        let bytes = serde_json::to_vec(document).unwrap();
        let opened = open_root(&bytes).unwrap_or_else(|e| panic!("{name}: should open, got: {e}"));
        let from_node = match &opened {
            Node::Array(a) => a.metadata().to_json(),
            Node::Group(g) => {
                g.metadata().unwrap_or_else(|| panic!("{name}: explicit group lost its metadata")).to_json()
            }
        };
        let parsed = NodeMetadata::from_json(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let reparsed = NodeMetadata::from_json(&serde_json::to_vec(&parsed.to_json()).unwrap()).unwrap();
        assert_eq!(reparsed, parsed, "{name}: serialising and reading back changes the metadata");
        for field in entry["kept"].as_array().unwrap() {
            let field = field.as_str().unwrap();
            for (how, json) in [("Node::open", &from_node), ("NodeMetadata::to_json", &parsed.to_json())] {
                assert_eq!(json.get(field), document.get(field), "{name}: {how} lost or changed {field:?}");
            }
        }
    }
}

/// Decision recorded here: the spec says chunk lengths "are non-zero when the corresponding
/// dimensions of the arrays have non-zero length", so a zero chunk length is valid exactly on an
/// empty dimension (the invalid table holds the converse).
#[test]
fn zero_chunk_length_is_allowed_on_an_empty_dimension() {
    let doc = br#"{"zarr_format": 3, "node_type": "array", "shape": [0, 6], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [0, 3]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]}"#;
    match open_root(doc) {
        Ok(Node::Array(a)) => assert_eq!(a.chunk_shape(), &[0, 3]),
        Ok(Node::Group(_)) => panic!("an array document opened as a group"),
        Err(e) => panic!("shape [0, 6] with chunk_shape [0, 3] should open: {e}"),
    }
}
