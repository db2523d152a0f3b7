//! Rectilinear chunk grids through the CLI: the folders zarr-python 3.4.2 wrote
//! (tests/fixtures/zarr34/rectilinear*) import into a database, pass `check`, print the values
//! zarr-python reads (`cat`), show their edges (`info`), and export to a folder and a zip holding
//! the documents and chunks byte for byte as written. With `ZARRDB_PYTHON_ZARR34` (a python with
//! zarr 3.4) zarr-python also reads both exports back equal to the source.

#[path = "common/harness.rs"]
#[expect(dead_code, reason = "only the command runner is used")]
mod harness;

use std::path::{Path, PathBuf};
use std::process::Command;

use harness::run;

const NAMES: [&str; 3] = ["rectilinear", "rectilinear_shrunk", "rectilinear_sharded"];

const READ: &str = r#"
import sys, warnings, numpy as np, zarr
warnings.simplefilter("ignore")
zarr.config.set({"array.rectilinear_chunks": True})
src = sys.argv[1]
for out in sys.argv[2:]:
    store = zarr.storage.ZipStore(out, mode="r") if out.endswith(".zip") else out
    got = zarr.open_array(store, mode="r")
    want = zarr.open_array(src, mode="r")
    assert got.metadata.to_dict()["chunk_grid"] == want.metadata.to_dict()["chunk_grid"], out
    np.testing.assert_array_equal(got[:], want[:])
"#;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/zarr34")
}

fn zarrdb(args: &[&str]) -> String {
    let out = run(Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args)).unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file under `dir`, by its path relative to `dir`.
fn files(dir: &Path, rel: &str, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = format!("{rel}{}", entry.file_name().to_str().unwrap());
        if entry.file_type().unwrap().is_dir() {
            files(&entry.path(), &format!("{name}/"), out);
        } else {
            out.push((name, std::fs::read(entry.path()).unwrap()));
        }
    }
    out.sort();
}

#[test]
fn zarr_34_rectilinear_arrays_import_check_cat_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    std::fs::create_dir(path("out")).unwrap();
    for name in NAMES {
        let src = fixtures().join(name);
        let db = path(&format!("{name}.zarrdb"));
        zarrdb(&["import", src.to_str().unwrap(), &db]);
        assert!(zarrdb(&["check", &db]).contains(": 0 problems"), "{name}");
        let info: serde_json::Value = serde_json::from_str(&zarrdb(&["info", &db, "/", "--json"])).unwrap();
        let written: serde_json::Value =
            serde_json::from_slice(&std::fs::read(src.join("zarr.json")).unwrap()).unwrap();
        assert_eq!(info["chunk_shapes"], written["chunk_grid"]["configuration"]["chunk_shapes"], "{name}: {info}");

        // `cat` prints what zarr-python reads (`<name>.read`, little-endian C order).
        let values: serde_json::Value = serde_json::from_str(&zarrdb(&["cat", &db, "/", "--json"])).unwrap();
        let read = std::fs::read(fixtures().join(format!("{name}.read"))).unwrap();
        let mut flat = Vec::new();
        let mut stack = vec![&values];
        while let Some(v) = stack.pop() {
            match v {
                serde_json::Value::Array(items) => stack.extend(items.iter().rev()),
                leaf => flat.push(leaf.as_f64().unwrap()),
            }
        }
        let want: Vec<f64> = match written["data_type"].as_str().unwrap() {
            "int16" => read.chunks(2).map(|b| i16::from_le_bytes([b[0], b[1]]) as f64).collect(),
            "float64" => read.chunks(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect(),
            "uint8" => read.iter().map(|&b| b as f64).collect(),
            other => panic!("{name}: no reader for {other}"),
        };
        assert_eq!(flat, want, "{name}");

        // Exports hold the documents and chunks as zarr-python wrote them.
        let (folder, zip) = (path(&format!("out/{name}")), path(&format!("out/{name}.zip")));
        zarrdb(&["export", &db, &folder]);
        zarrdb(&["export", &db, &zip]);
        let (mut want, mut got) = (Vec::new(), Vec::new());
        files(&src, "", &mut want);
        files(Path::new(&folder), "", &mut got);
        let want_doc: serde_json::Value =
            serde_json::from_slice(&want.iter().find(|f| f.0 == "zarr.json").unwrap().1).unwrap();
        let got_doc: serde_json::Value =
            serde_json::from_slice(&got.iter().find(|f| f.0 == "zarr.json").unwrap().1).unwrap();
        assert_eq!(got_doc["chunk_grid"], want_doc["chunk_grid"], "{name}");
        let chunks =
            |all: &[(String, Vec<u8>)]| all.iter().filter(|f| f.0.starts_with("c/")).cloned().collect::<Vec<_>>();
        assert_eq!(chunks(&got), chunks(&want), "{name}: exported chunks differ");
    }
    let Some(python) = std::env::var_os("ZARRDB_PYTHON_ZARR34").map(PathBuf::from) else {
        println!("zarr-python read-back skipped: ZARRDB_PYTHON_ZARR34 is not set (a python with zarr 3.4)");
        return;
    };
    for name in NAMES {
        let src = fixtures().join(name);
        let args = [READ, src.to_str().unwrap(), &path(&format!("out/{name}")), &path(&format!("out/{name}.zip"))];
        run(Command::new(&python).arg("-c").args(args)).unwrap();
    }
}
