//! `zarrdb info` on a store whose root zarr.json is invalid (every document of
//! tests/fixtures/metadata/invalid.json) must fail the way a command-line tool should: a non-zero
//! exit status that is not 101 (101 is Rust's panic status, i.e. a bug), exactly one line on stderr
//! (scripts and log scrapers read errors line by line), and nothing on stdout (so a pipeline never
//! consumes half a report as if it were data).

use std::process::Command;

use serde_json::Value;

const TABLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/metadata/invalid.json");

/// The bytes of one table entry: `document` as JSON, or `raw` text, or `raw_hex` bytes.
fn document_bytes(entry: &Value) -> Vec<u8> {
    if let Some(raw) = entry.get("raw") {
        return raw.as_str().expect("raw is a string").as_bytes().to_vec();
    }
    if let Some(hex) = entry.get("raw_hex").and_then(Value::as_str) {
        return (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    }
    serde_json::to_vec(entry.get("document").expect("document, raw or raw_hex")).unwrap()
}

/// What is wrong with one run, if anything.
fn check(name: &str, output: &std::process::Output) -> Option<String> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.strip_suffix('\n').unwrap_or(&stderr).split('\n').collect();
    let problem = match output.status.code() {
        Some(0) => "exit status 0".to_owned(),
        Some(101) => "exit status 101 (panic)".to_owned(),
        None => "killed by a signal".to_owned(),
        Some(_) if stderr.trim().is_empty() => "stderr is empty".to_owned(),
        Some(_) if lines.len() != 1 => format!("stderr has {} lines", lines.len()),
        Some(_) if !output.stdout.is_empty() => "stdout is not empty".to_owned(),
        Some(_) => return None,
    };
    Some(format!("{name}: {problem}\n  stdout: {:?}\n  stderr: {stderr:?}", String::from_utf8_lossy(&output.stdout)))
}

/// All documents run, all failures reported together.
#[test]
fn info_on_invalid_metadata_fails_with_one_line_on_stderr() {
    let table: Value = serde_json::from_str(&std::fs::read_to_string(TABLE).unwrap()).unwrap();
    let table = table.as_array().expect("a list");
    assert!(table.len() >= 50, "expected at least 50 invalid documents, found {}", table.len());
    let mut failures = Vec::new();
    for entry in table {
        let name = entry["name"].as_str().expect("name");
        // A fresh directory per document, so no run can see another's leftovers.
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        std::fs::create_dir(&store).unwrap();
        std::fs::write(store.join("zarr.json"), document_bytes(entry)).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_zarrdb")).arg("info").arg(&store).output().unwrap();
        failures.extend(check(name, &output));
    }
    assert!(failures.is_empty(), "{} of {} documents:\n{}", failures.len(), table.len(), failures.join("\n"));
}
