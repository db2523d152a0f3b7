//! `zarrdb info` on a store whose root zarr.json is invalid (every document of
//! tests/fixtures/metadata/invalid.json) must fail the way a command-line tool should: a non-zero
//! exit status that is not 101 (101 is Rust's panic status, i.e. a bug), exactly one line on stderr
//! (scripts and log scrapers read errors line by line), and nothing on stdout (so a pipeline never
//! consumes half a report as if it were data).

#[path = "common/metadata_fixtures.rs"]
mod metadata_fixtures;

use std::process::Command;

use metadata_fixtures::{document_bytes, load};

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
    let table = load("invalid.json");
    assert!(table.len() >= 50, "expected at least 50 invalid documents, found {}", table.len());
    let mut failures = Vec::new();
    for entry in &table {
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
