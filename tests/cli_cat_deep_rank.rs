//! `cat` of arrays of valid but absurd rank (issue 40): the nested-list printer recursed once per
//! dimension and overflowed the stack at 30,000 dimensions, and so did `cat --json` of a v2
//! `.zarray` of 100,000 dimensions once imported. It now walks the dimensions with an odometer:
//! the output is the exact nested lists, whatever the rank.

use std::io::Read;
use std::process::{Command, Stdio};

use serde_json::json;

fn zarrdb() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zarrdb"))
}

/// `[[...[7]...]]`, `rank` deep.
fn compact(rank: usize, value: &str) -> String {
    format!("{}{value}{}\n", "[".repeat(rank), "]".repeat(rank))
}

/// A redb database holding an array of 30,000 dimensions of length 1 (a folder cannot: its chunk
/// key would be 30,000 folders deep).
fn rank_thirty_thousand_database(dir: &std::path::Path) -> String {
    let n = 30_000;
    let path = dir.join("deep.redb");
    let db = zarrdb::Database::create(&path).unwrap();
    let mut meta = zarrdb::ArrayMetadata::new(zarrdb::DataType::UInt8, vec![1; n], vec![1; n]);
    meta.fill_value = zarrdb::FillValue::from_le_bytes(vec![7]);
    zarrdb::Array::create(db.store(), "/", meta).unwrap();
    format!("redb:{}", path.display())
}

#[test]
fn json_of_thirty_thousand_dimensions() {
    let dir = tempfile::tempdir().unwrap();
    let locator = rank_thirty_thousand_database(dir.path());
    let out = zarrdb().args(["cat", "--json", &locator, "/"]).output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert!(String::from_utf8(out.stdout).unwrap() == compact(30_000, "7"));
}

/// The indented form is quadratic in the rank (two spaces per level on each line), so it is read
/// as it streams and checked line by line rather than held.
#[test]
fn text_of_thirty_thousand_dimensions() {
    let n = 30_000;
    let dir = tempfile::tempdir().unwrap();
    let locator = rank_thirty_thousand_database(dir.path());
    let mut child = zarrdb().args(["cat", &locator, "/"]).stdout(Stdio::piped()).spawn().unwrap();
    let mut text = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut text).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let lines: Vec<&[u8]> = text.strip_suffix(b"\n").unwrap().split(|&b| b == b'\n').collect();
    assert_eq!(lines.len(), 2 * n + 1);
    for (i, line) in lines.iter().enumerate() {
        let (depth, body): (usize, &[u8]) = match i {
            i if i < n => (i, b"["),
            i if i == n => (n, b"7"),
            i => (2 * n - i, b"]"),
        };
        let (indent, rest) = line.split_at(line.len() - body.len());
        assert!(rest == body && indent.len() == 2 * depth && indent.iter().all(|&b| b == b' '), "line {i}");
    }
}

#[test]
fn json_of_an_imported_v2_array_of_a_hundred_thousand_dimensions() {
    let n = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("v2");
    std::fs::create_dir_all(folder.join("arr")).unwrap();
    std::fs::write(folder.join(".zgroup"), br#"{"zarr_format": 2}"#).unwrap();
    let zarray = json!({"zarr_format": 2, "shape": vec![1u64; n], "chunks": vec![1u64; n], "dtype": "<i2",
        "compressor": null, "fill_value": -3, "order": "C", "filters": null});
    std::fs::write(folder.join("arr/.zarray"), serde_json::to_vec(&zarray).unwrap()).unwrap();
    let db = dir.path().join("db.redb");
    let out = zarrdb().args(["import", folder.to_str().unwrap(), db.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = zarrdb().args(["cat", "--json", db.to_str().unwrap(), "/arr"]).output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert!(String::from_utf8(out.stdout).unwrap() == compact(n, "-3"));
}
