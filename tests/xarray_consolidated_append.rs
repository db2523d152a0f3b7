//! Issue 14, acceptance item 3: a dataset xarray wrote with consolidated metadata (v3 inline, or
//! a v2 `.zmetadata`) is imported, grown through the Rust API (`Array::append`, and
//! `Array::resize` with a region write), and exported; `xarray.open_zarr(consolidated=True)` of
//! the export shows the new shape and values, and `zarr.open_consolidated` reads it. The import
//! keeps only an empty request in place of the source's consolidated metadata (and says so); the
//! export writes it afresh.

#[path = "common/xarray.rs"]
mod xarray;

use xarray::{export, import, json, write_dataset};
use zarrdb::{Array, Database, ExportOptions};

/// Time steps appended, as `xarray_dataset.py` expects them.
const ROWS: u64 = 2;
/// Time steps xarray wrote.
const TIMES: u64 = 6;

fn grow(db: &Database) {
    let store = db.store();
    let steps: Vec<u64> = (TIMES..TIMES + ROWS).collect();
    // The time coordinate, CF-encoded by xarray as days since the first step.
    let mut time = Array::open(store.clone(), "/time").unwrap();
    let days: Vec<i64> = steps.iter().map(|&t| t as i64).collect();
    time.append(0, &[ROWS], &days).unwrap();

    let mut temperature = Array::open(store.clone(), "/temperature").unwrap();
    let rows: Vec<f32> = steps.iter().flat_map(|&t| (0..4).map(move |x| (100 * t + x) as f32)).collect();
    temperature.append(0, &[ROWS, 4], &rows).unwrap();

    let mut pressure = Array::open(store, "/pressure").unwrap();
    pressure.resize(&[TIMES + ROWS]).unwrap();
    let values: Vec<f64> = steps.iter().map(|&t| 1000.0 + t as f64).collect();
    pressure.write_region(&[TIMES], &[ROWS], &values).unwrap();
}

fn append_then_export(zarr_format: u8, consolidated_source_key: &str) {
    let dir = tempfile::tempdir().unwrap();
    let source = write_dataset(dir.path(), "source.zarr", zarr_format);
    let (db, report) = import(dir.path(), &source);
    assert_eq!(report.consolidated_metadata, vec![consolidated_source_key.to_owned()]);
    let root = db.store().get("zarr.json").unwrap().expect("a root group document");
    let root: serde_json::Value = serde_json::from_slice(&root).unwrap();
    let request = serde_json::json!({"kind": "inline", "must_understand": false, "metadata": {}});
    assert_eq!(root["consolidated_metadata"], request, "the database stores the request, never a copy");

    grow(&db);
    let exported = export(&db, dir.path(), "export.zarr", &ExportOptions::default());
    let doc = json(&exported, "zarr.json");
    let shape = &doc["consolidated_metadata"]["metadata"]["temperature"]["shape"];
    assert_eq!(shape, &serde_json::json!([TIMES + ROWS, 4]), "{doc}");
    xarray::xarray(&["appended", &exported, &ROWS.to_string()]);
    xarray::xarray(&["open_consolidated", &exported, &ROWS.to_string()]);
}

#[test]
fn v3_consolidated_source() {
    append_then_export(3, "zarr.json");
}

#[test]
fn v2_consolidated_source_exported_as_v3() {
    append_then_export(2, ".zmetadata");
}
