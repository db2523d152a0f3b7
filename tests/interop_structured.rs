//! NumPy structured (record) arrays, zarr-python's `structured` data type: arrays zarr-python
//! wrote as v3 and as v2 import, print each record as an object of its fields (`zarrdb cat
//! --json`), pass `check`, and export to a folder zarr-python reads back equal; a structured
//! array zarrdb writes from Rust is read by zarr-python as the same records.

#[path = "common/harness.rs"]
#[expect(dead_code, reason = "records are compared as values, not byte for byte")]
mod harness;

use std::process::Command;
use std::sync::Arc;

use harness::{python, run};
use zarrdb::metadata::StructuredType;
use zarrdb::{Array, ArrayMetadata, DataType, DirectoryStore, Store};

const WRITE: &str = r#"
import sys, warnings, numpy as np, zarr
warnings.simplefilter("ignore")
dt = np.dtype([("id", "<i4"), ("x", "<f8"), ("ok", "?")])
rec = np.array([(1, 0.5, True), (-2, 1e300, False), (3, -0.0, True)], dtype=dt)
for fmt in (3, 2):
    a = zarr.create_array(f"{sys.argv[1]}/v{fmt}.zarr", shape=(4,), chunks=(3,), dtype=dt, zarr_format=fmt)
    a[:3] = rec
"#;

const READ: &str = r#"
import sys, warnings, numpy as np, zarr
warnings.simplefilter("ignore")
a = zarr.open_array(sys.argv[1], mode="r")
got = a[:]
assert got.dtype.names == ("id", "x", "ok"), got.dtype
assert got["id"].tolist() == [1, -2, 3, 0], got
assert got["x"].tolist() == [0.5, 1e300, -0.0, 0.0], got
assert got["ok"].tolist() == [True, False, True, False], got
"#;

fn zarrdb(args: &[&str]) -> String {
    let out = run(Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args)).unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn zarr_python_records_import_print_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    run(Command::new(python()).args(["-c", WRITE, &path("")])).unwrap();
    for fmt in ["v3", "v2"] {
        let db = path(&format!("{fmt}.zarrdb"));
        zarrdb(&["import", &path(&format!("{fmt}.zarr")), &db]);
        assert!(zarrdb(&["check", &db]).contains(": 0 problems"), "{fmt}");
        let records: serde_json::Value = serde_json::from_str(&zarrdb(&["cat", &db, "/", "--json"])).unwrap();
        assert_eq!(
            records,
            serde_json::json!([
                {"id": 1, "x": 0.5, "ok": true},
                {"id": -2, "x": 1e300, "ok": false},
                {"id": 3, "x": "0x8000000000000000", "ok": true},
                {"id": 0, "x": 0.0, "ok": false},
            ]),
            "{fmt}"
        );
        let export = path(&format!("{fmt}-export.zarr"));
        zarrdb(&["export", &db, &export]);
        run(Command::new(python()).args(["-c", READ, &export])).unwrap();
    }
}

#[test]
fn records_written_from_rust_read_in_zarr_python() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("rust.zarr");
    let store: Arc<dyn Store> = Arc::new(DirectoryStore::create(&folder).unwrap());
    let fields = vec![("id".into(), DataType::Int32), ("x".into(), DataType::Float64), ("ok".into(), DataType::Bool)];
    let record = DataType::Structured(Arc::new(StructuredType::new(fields).unwrap()));
    assert_eq!(record.size(), 13);
    let a = Array::create(store, "/", ArrayMetadata::new(record, vec![4], vec![3])).unwrap();
    let mut bytes = Vec::new();
    for (id, x, ok) in [(1i32, 0.5f64, true), (-2, 1e300, false), (3, -0.0, true)] {
        bytes.extend(id.to_le_bytes());
        bytes.extend(x.to_le_bytes());
        bytes.push(u8::from(ok));
    }
    a.write_region_bytes(&[0], &[3], &bytes).unwrap();
    run(Command::new(python()).args(["-c", READ, folder.to_str().unwrap()])).unwrap();
}
