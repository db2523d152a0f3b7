//! What the xarray tests share: running `tests/interop/xarray_dataset.py` (which writes and checks
//! one small numeric dataset) and the import and export around it.
//!
//! Python comes from `ZARRDB_PYTHON` or `.venv`; without it the tests fail rather than skip.

use std::path::Path;
use std::process::Command;

// The byte comparison of the shared harness is for the fixture round trips, not used here.
#[path = "harness.rs"]
#[allow(dead_code)]
mod harness;

use zarrdb::transfer::ImportReport;
use zarrdb::{Database, ExportOptions, ImportOptions};

/// Run `xarray_dataset.py` with these arguments; panics with its output when it fails.
pub fn xarray(args: &[&str]) {
    let mut cmd = Command::new(harness::python());
    cmd.arg(Path::new(harness::REPO).join("tests/interop/xarray_dataset.py")).args(args);
    if let Err(e) = harness::run(&mut cmd) {
        panic!("{e}");
    }
}

/// Write the dataset with xarray (`zarr_format` 2 or 3, consolidated) to `dir/name`.
pub fn write_dataset(dir: &Path, name: &str, zarr_format: u8) -> String {
    let path = dir.join(name).display().to_string();
    xarray(&["write", &path, &zarr_format.to_string()]);
    path
}

/// Import `source` into a new database in `dir`.
pub fn import(dir: &Path, source: &str) -> (Database, ImportReport) {
    let db = Database::create(dir.join("data.zarrdb")).expect("creating the database");
    let report = db.import(source, &ImportOptions::default()).expect("importing");
    (db, report)
}

/// Export the whole database to `dir/name` with `options`.
pub fn export(db: &Database, dir: &Path, name: &str, options: &ExportOptions) -> String {
    let path = dir.join(name).display().to_string();
    db.export(&path, options).expect("exporting");
    path
}

/// A JSON document of an export.
pub fn json(path: &str, key: &str) -> serde_json::Value {
    let bytes = std::fs::read(Path::new(path).join(key)).unwrap_or_else(|e| panic!("{path}/{key}: {e}"));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{path}/{key}: {e}"))
}
