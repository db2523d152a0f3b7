//! The CLI against a real directory store built through the library: tree, info (text and JSON
//! field names of docs/cli.md), cat (regions, JSON, raw), and one-line errors.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::{json, Value};
use zarrdb::{Array, ArrayMetadata, DataType, DirectoryStore, FillValue, Group, Store};

fn zarrdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args).output().expect("run zarrdb")
}

fn ok_stdout(args: &[&str]) -> String {
    let out = zarrdb(args);
    assert!(out.status.success(), "zarrdb {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// /            group {"title": "t"}
/// /grid        float64 [4, 3] chunks [2, 2], NaN fill, rows 0..2 written
/// /implicit/   no zarr.json (implicit group)
/// /implicit/x  uint8 [5] chunks [5]
fn build(root: &Path) {
    let store: Arc<dyn Store> = Arc::new(DirectoryStore::create(root).unwrap());
    Group::create(store.clone(), "/", json!({"title": "t"}).as_object().unwrap().clone()).unwrap();
    let mut meta = ArrayMetadata::new(DataType::Float64, vec![4, 3], vec![2, 2]);
    meta.fill_value = FillValue::from_json(&json!("NaN"), DataType::Float64).unwrap();
    meta.dimension_names = Some(vec![Some("y".into()), None]);
    let grid = Array::create(store.clone(), "/grid", meta).unwrap();
    grid.write_region(&[0, 0], &[2, 3], &[0.5, 1.5, 2.5, 3.5, 4.5, 5.5]).unwrap();
    Array::create(store.clone(), "/implicit/x", ArrayMetadata::new(DataType::UInt8, vec![5], vec![5]))
        .unwrap()
        .write_region(&[1], &[2], &[7u8, 9])
        .unwrap();
    store.erase("implicit/zarr.json").unwrap();
}

#[test]
fn tree_shows_arrays_and_implicit_groups() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let text = ok_stdout(&["tree", dir.path().to_str().unwrap()]);
    let expected = "/\n├── grid  float64 [4, 3] chunks [2, 2] codecs [bytes]\n└── implicit (implicit)\n    └── x  uint8 [5] chunks [5] codecs [bytes]\n";
    assert_eq!(text, expected);
}

#[test]
fn info_json_has_the_documented_fields() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let store = dir.path().to_str().unwrap();
    let info: Value = serde_json::from_str(&ok_stdout(&["info", store, "/grid", "--json"])).unwrap();
    assert_eq!(info["path"], "/grid");
    assert_eq!(info["node_type"], "array");
    assert_eq!(info["implicit"], false);
    assert_eq!(info["shape"], json!([4, 3]));
    assert_eq!(info["chunk_shape"], json!([2, 2]));
    assert_eq!(info["data_type"], "float64");
    assert_eq!(info["fill_value"], "NaN");
    assert_eq!(info["codecs"], json!([{"name": "bytes", "configuration": {"endian": "little"}}]));
    assert_eq!(info["dimension_names"], json!(["y", null]));
    assert_eq!(info["nbytes"], 96);
    assert_eq!(info["chunks_initialized"], 2, "rows 0..2 touch two of the four chunks");
    assert_eq!(info["chunks_total"], 4);
    let zarr_json = std::fs::metadata(dir.path().join("grid/zarr.json")).unwrap().len();
    assert_eq!(info["nbytes_stored"], 2 * 32 + zarr_json, "two 2x2 float64 chunks plus the metadata");

    let root: Value = serde_json::from_str(&ok_stdout(&["info", store, "--json"])).unwrap();
    assert_eq!(root["node_type"], "group");
    assert_eq!(root["attributes"], json!({"title": "t"}));
    assert_eq!(root["children"], json!(["grid", "implicit"]));
    let implicit: Value = serde_json::from_str(&ok_stdout(&["info", store, "/implicit", "--json"])).unwrap();
    assert_eq!(implicit["implicit"], true);
    assert_eq!(implicit["children"], json!(["x"]));

    let text = ok_stdout(&["info", store, "/grid"]);
    assert!(text.contains("chunks_initialized : 2"), "{text}");
}

#[test]
fn cat_regions_in_json_and_raw() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let store = dir.path().to_str().unwrap();
    let all: Value = serde_json::from_str(&ok_stdout(&["cat", store, "/grid", "--json"])).unwrap();
    assert_eq!(all, json!([[0.5, 1.5, 2.5], [3.5, 4.5, 5.5], ["NaN", "NaN", "NaN"], ["NaN", "NaN", "NaN"]]));
    let column: Value =
        serde_json::from_str(&ok_stdout(&["cat", store, "/grid", "--region", "1:3,2", "--json"])).unwrap();
    assert_eq!(column, json!([5.5, "NaN"]), "an index drops its dimension");
    let raw = zarrdb(&["cat", store, "/implicit/x", "--raw"]).stdout;
    assert_eq!(raw, vec![0, 7, 9, 0, 0]);
    let raw = zarrdb(&["cat", store, "/grid", "--region", "-1:,0:1", "--raw"]).stdout;
    assert_eq!(raw, f64::NAN.to_le_bytes().to_vec());
}

#[test]
fn errors_are_one_line_and_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let store = dir.path().to_str().unwrap();
    let missing = dir.path().join("nope");
    for args in [
        vec!["cat", store, "/grid", "--region", "0:9"],
        vec!["cat", store, "/grid", "--region", "a"],
        vec!["cat", store, "/implicit"],
        vec!["cat", store, "/missing"],
        vec!["info", store, "/__zarrdb"],
        vec!["info", store, "/a/../b"],
        vec!["tree", missing.to_str().unwrap()],
        vec!["tree", &format!("lmdb:{}", missing.display())],
    ] {
        let out = zarrdb(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("zarrdb: error: "), "{err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn demo_runs_and_keeps_its_dataset_when_given_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo");
    let locator = format!("dir:{}", path.display());
    let text = ok_stdout(&["demo", &locator]);
    assert!(text.contains("read back exactly"), "{text}");
    assert!(path.join("simulation/temperature/zarr.json").exists());
    let out = zarrdb(&["demo", &locator]);
    assert_eq!(out.status.code(), Some(3), "a non-empty target is refused");
}

#[test]
fn demo_builds_a_database_that_the_other_commands_read() {
    let dir = tempfile::tempdir().unwrap();
    for (locator, file) in [
        (dir.path().join("demo.zarrdb").display().to_string(), dir.path().join("demo.zarrdb")),
        (format!("lmdb:{}", dir.path().join("demo.lmdb").display()), dir.path().join("demo.lmdb/data.mdb")),
        (format!("sled:{}", dir.path().join("demo.sled").display()), dir.path().join("demo.sled/db")),
    ] {
        let text = ok_stdout(&["demo", &locator]);
        assert!(text.contains("one transaction per time step"), "{text}");
        assert!(file.is_file(), "{locator}: {} missing", file.display());
        // The bare path (no scheme) is recognised from what it holds.
        let bare = file.parent().filter(|p| p.extension().is_some_and(|e| e != "zarrdb")).unwrap_or(&file);
        let bare = bare.to_str().unwrap();
        let check = ok_stdout(&["check", bare]);
        assert!(check.contains("2 arrays, 33 chunks: 0 problems"), "{locator}: {check}");
        let info = ok_stdout(&["info", bare, "/simulation", "--json"]);
        let info: serde_json::Value = serde_json::from_str(&info).unwrap();
        assert_eq!(info["attributes"]["steps_written"], 24, "{locator}");
        assert_eq!(zarrdb(&["demo", &locator]).status.code(), Some(3), "{locator}: an existing database is refused");
    }
}
