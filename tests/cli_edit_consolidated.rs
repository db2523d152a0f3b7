//! Consolidated metadata stays true through the editing commands: xarray writes a consolidated
//! Zarr v3 dataset, `zarrdb import` takes it into a database, `attrs`, `append`, `mv`, `rm`,
//! `create` and `mkgroup` change it, `zarrdb export` writes it out, and xarray opening the export
//! with `consolidated=True` (the root's consolidated metadata alone) sees every change
//! (`tests/interop/cli_consolidated.py`). A database never stores consolidated metadata (it is
//! computed on every read), so that part checks what export makes of the edited database. A
//! folder does store it: an edit in place (`attrs dir:...`) refreshes the root's copy, and `cp`
//! into a folder fills the group's consolidated metadata from what it copied.
//!
//! Python comes from `ZARRDB_PYTHON` or `.venv`; without it the test fails rather than skips.

#[path = "common/harness.rs"]
#[expect(dead_code, reason = "datasets are compared by xarray, not byte for byte")]
mod harness;

use std::path::Path;
use std::process::Command;

use harness::{python, run, REPO};

fn script(args: &[&str]) {
    let mut cmd = Command::new(python());
    cmd.arg(Path::new(REPO).join("tests/interop/cli_consolidated.py")).args(args);
    if let Err(e) = run(&mut cmd) {
        panic!("{e}");
    }
}

fn zarrdb(args: &[&str]) {
    if let Err(e) = run(Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args)) {
        panic!("{e}");
    }
}

fn edits_seen_through_consolidated_metadata(db: &str, dir: &Path) {
    let source = dir.join("source.zarr").display().to_string();
    script(&["write", &source]);
    zarrdb(&["import", &source, db]);
    zarrdb(&["attrs", db, "/", "--set", "edited=true", "--delete", "title"]);
    zarrdb(&["attrs", db, "/temperature", "--set", "long_name=air"]);
    zarrdb(&["append", db, "/time", &format!("{source}.time.npy")]);
    zarrdb(&["append", db, "/temperature", &format!("{source}.temperature.npy"), "--axis", "0"]);
    zarrdb(&["mv", db, "/mask", "/land_mask"]);
    zarrdb(&["rm", db, "/pressure"]);
    zarrdb(&["create", db, "/extra", "--dtype", "int16", "--shape", "4", "--dims", "x"]);
    zarrdb(&["mkgroup", db, "/sub"]);
    let exported = dir.join("exported.zarr").display().to_string();
    zarrdb(&["export", db, &exported]);
    script(&["check", &exported]);
}

#[test]
fn edits_on_redb_reach_consolidated_metadata() {
    let dir = tempfile::tempdir().unwrap();
    edits_seen_through_consolidated_metadata(dir.path().join("data.zarrdb").to_str().unwrap(), dir.path());
}

#[test]
fn edits_on_lmdb_reach_consolidated_metadata() {
    let dir = tempfile::tempdir().unwrap();
    edits_seen_through_consolidated_metadata(&format!("lmdb:{}", dir.path().join("env").display()), dir.path());
}

#[test]
fn folders_keep_consolidated_metadata_true() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source.zarr").display().to_string();
    script(&["write", &source]);
    // Edited in place: the root's consolidated metadata is computed again.
    zarrdb(&["attrs", &format!("dir:{source}"), "/temperature", "--set", "long_name=air"]);
    script(&["identical", &source]);
    // Copied into a new folder, from the folder and through a database.
    let copied = dir.path().join("copied.zarr").display().to_string();
    zarrdb(&["cp", &format!("dir:{source}"), &format!("dir:{copied}")]);
    script(&["identical", &copied]);
    let db = dir.path().join("data.zarrdb").display().to_string();
    zarrdb(&["import", &source, &db]);
    let out = dir.path().join("from_db.zarr").display().to_string();
    zarrdb(&["cp", &db, &format!("dir:{out}")]);
    script(&["identical", &out]);
}
