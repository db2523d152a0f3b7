//! `zarrdb info` of an array whose sizes pass u64 (shape [2^64-1, 2^64-1]): exact decimal
//! strings, not sizes truncated to 64 bits, and no overflow panic.

use std::process::Command;

use serde_json::{json, Value};

#[test]
fn sizes_beyond_u64_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [u64::MAX, u64::MAX],
        "data_type": "float64", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1, 1]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]});
    std::fs::write(dir.path().join("zarr.json"), serde_json::to_vec(&doc).unwrap()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_zarrdb"))
        .args(["info", dir.path().to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    let elements = u64::MAX as u128 * u64::MAX as u128;
    assert_eq!(info["chunks_total"], json!(elements.to_string()));
    // 8 bytes each: past u128 too, still exact.
    assert_eq!(info["nbytes"], json!("2722258935367507707411848954274792865800"));
    // du: no overflow either; a size past 2^128 bytes is unknown, not wrapped or capped.
    let du = Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(["du", dir.path().to_str().unwrap(), "--json"]).output();
    let du = du.unwrap();
    assert!(du.status.success(), "{}", String::from_utf8_lossy(&du.stderr));
    let rows: Value = serde_json::from_slice(&du.stdout).unwrap();
    assert_eq!(rows[0]["logical_bytes"], Value::Null);
    assert!(String::from_utf8(
        Command::new(env!("CARGO_BIN_EXE_zarrdb"))
            .args(["tree", "-l", dir.path().to_str().unwrap()])
            .output()
            .unwrap()
            .stdout
    )
    .unwrap()
    .contains("stored of ?"));
}

#[test]
fn du_sizes_beyond_u64_are_decimal_strings() {
    let dir = tempfile::tempdir().unwrap();
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [u64::MAX, 2],
        "data_type": "uint8", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1, 1]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]});
    std::fs::write(dir.path().join("zarr.json"), serde_json::to_vec(&doc).unwrap()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(["du", dir.path().to_str().unwrap(), "--json"]).output();
    let out = out.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows[0]["logical_bytes"], json!((u64::MAX as u128 * 2).to_string()));
}

/// `cat` of an array far larger than memory: `--json` is refused with a message, not an
/// allocation the OOM killer ends; `--raw` streams the region in slabs.
#[test]
fn cat_of_huge_arrays_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [1u64 << 40, 4],
        "data_type": "uint8", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1 << 20, 4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 7, "codecs": [{"name": "bytes"}]});
    std::fs::write(dir.path().join("zarr.json"), serde_json::to_vec(&doc).unwrap()).unwrap();
    let store = dir.path().to_str().unwrap();
    let cat = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(["cat", store, "/"]).args(args).output().unwrap()
    };

    let out = cat(&["--json"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("too many to print as JSON"));

    // 200 MiB of fill value through a pipe, in 64 MiB slabs.
    let rows = (200u64 << 20) / 4;
    let out = cat(&["--raw", "--region", &format!("5:{}", 5 + rows)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout.len() as u64, rows * 4);
    assert!(out.stdout.iter().all(|&b| b == 7));
}
