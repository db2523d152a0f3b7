//! Realistic xarray datasets through zarrdb: `tests/interop/xarray_datasets.py` writes a
//! climate-style grid and a station table as Zarr v2 and v3, consolidated and not; each is taken
//! through `zarrdb import`, `zarrdb check` and `zarrdb export` to a folder and to a zip, and
//! xarray must open every export, with `consolidated=True` and `consolidated=False`, as
//! `assert_identical` to the source. Exports are Zarr v3, so the v2 sources also show that a v2
//! dataset comes out as v3 with its dimensions.

#[path = "common/harness.rs"]
#[expect(dead_code, reason = "datasets are compared by xarray, not byte for byte")]
mod harness;

use std::path::Path;
use std::process::Command;

use harness::{python, run, REPO};

fn datasets(args: &[&str]) -> Result<String, String> {
    let script = Path::new(REPO).join("tests/interop/xarray_datasets.py");
    let out = run(Command::new(python()).arg(script).args(args))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn zarrdb(args: &[&str]) -> Result<String, String> {
    let out = run(Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One dataset through import, check and both exports; every failure is returned.
fn round_trip(dir: &Path, name: &str) -> Vec<String> {
    let path = |suffix: &str| dir.join(format!("{name}{suffix}")).to_str().unwrap().to_owned();
    let (source, db) = (path(".zarr"), path(".zarrdb"));
    if let Err(e) = zarrdb(&["import", &source, &db]) {
        return vec![format!("{name}: import: {e}")];
    }
    let mut failures = Vec::new();
    match zarrdb(&["check", &db]) {
        Ok(out) if out.contains(": 0 problems") => {}
        Ok(out) => failures.push(format!("{name}: check: {out}")),
        Err(e) => failures.push(format!("{name}: check: {e}")),
    }
    for export in [path("-export.zarr"), path("-export.zip")] {
        if let Err(e) = zarrdb(&["export", &db, &export]) {
            failures.push(format!("{name}: export to {export}: {e}"));
        } else if let Err(e) = datasets(&["check", &source, &export]) {
            failures.push(format!("{name}: xarray reading {export}: {e}"));
        }
    }
    failures
}

#[test]
fn xarray_datasets_survive_import_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let names = datasets(&["write", dir.path().to_str().unwrap()]).unwrap();
    let names: Vec<&str> = names.lines().collect();
    assert_eq!(names.len(), 8, "two datasets, v2 and v3, consolidated and not: {names:?}");
    let failures: Vec<String> = names.iter().flat_map(|name| round_trip(dir.path(), name)).collect();
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
