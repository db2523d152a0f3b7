//! The metadata fixture tables under tests/fixtures/metadata/, shared by `tests/metadata_invalid.rs`
//! and `tests/cli_invalid_metadata.rs`.

use serde_json::Value;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/metadata");

/// The entries of one fixture table (a JSON list).
pub fn load(file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!("{FIXTURES}/{file}")).expect("fixture readable");
    serde_json::from_str::<Value>(&text).expect("fixture is JSON").as_array().expect("a list").clone()
}

/// The bytes to store as `zarr.json` for one table entry: `document` as JSON, or `raw` text, or
/// `raw_hex` bytes (for documents that cannot be JSON values, e.g. invalid UTF-8).
pub fn document_bytes(entry: &Value) -> Vec<u8> {
    if let Some(raw) = entry.get("raw") {
        return raw.as_str().expect("raw is a string").as_bytes().to_vec();
    }
    if let Some(hex) = entry.get("raw_hex").and_then(Value::as_str) {
        return (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    }
    serde_json::to_vec(entry.get("document").expect("document, raw or raw_hex")).unwrap()
}
