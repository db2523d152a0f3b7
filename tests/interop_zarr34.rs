//! zarr-python 3.4 (the python `ZARRDB_PYTHON_ZARR34` names): arrays with the `struct` data type
//! (nested, with a time field) and the `scale_offset` and `cast_value` codecs, written by
//! zarr-python, import into a database, pass `check`, print their values, and export to a folder
//! zarr-python 3.4 reads back equal to what it wrote. Without `ZARRDB_PYTHON_ZARR34` the test
//! prints why and passes: the main test environment pins zarr 3.1, which has neither.
//! `cast_value` needs zarr-python's optional backend `cast-value-rs` in that environment.

#[path = "common/harness.rs"]
#[expect(dead_code, reason = "values are compared by zarr-python")]
mod harness;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use harness::run;
use zarrdb::metadata::{StructSpelling, StructuredType};
use zarrdb::{Array, ArrayMetadata, DataType, DirectoryStore, FillValue, Store};

const WRITE: &str = r#"
import json, sys, warnings, numpy as np, zarr
from zarr.codecs.scale_offset import ScaleOffset
from zarr.codecs.cast_value import CastValue
warnings.simplefilter("ignore")
root = sys.argv[1]
rec = np.dtype([("id", "<i4"), ("p", [("x", "<f4"), ("y", "<f4")]), ("t", "M8[s]"), ("tag", "S3")])
a = zarr.create_array(f"{root}/records.zarr", shape=(5,), chunks=(2,), dtype=rec,
                      fill_value=(7, (1.5, -1.0), 0, b"ab"))
a[:4] = np.array([(1, (0.5, 2.0), 1_700_000_000, b"a"), (-2, (1e30, 0.0), -5, b"bcd"),
                  (3, (-0.0, 9.0), 0, b""), (7, (1.5, -1.0), 0, b"ab")], dtype=rec)
a = zarr.create_array(f"{root}/scaled.zarr", shape=(7,), chunks=(3,), dtype="float32", fill_value=20.0,
                      filters=[ScaleOffset(offset=20.0, scale=4.0)])
a[:5] = [20.0, 20.25, -3.5, np.nan, 1e6]
try:
    import cast_value_rs  # noqa: F401
except ImportError:
    print("no cast-value-rs: the cast_value array is not written", file=sys.stderr)
else:
    a = zarr.create_array(f"{root}/cast.zarr", shape=(7,), chunks=(3,), dtype="float64", fill_value=0.0,
                          filters=[ScaleOffset(offset=-1, scale=10),
                                   CastValue(data_type="int16", rounding="nearest-away", out_of_range="clamp")])
    a[:6] = [0.04, 0.05, -1.0, 3276.8, -1e9, 12.25]
"#;

const READ: &str = r#"
import sys, warnings, numpy as np, zarr
warnings.simplefilter("ignore")
src, out = sys.argv[1], sys.argv[2]
for name in sys.argv[3:]:
    want = zarr.open_array(f"{src}/{name}", mode="r")
    got = zarr.open_array(f"{out}/{name}", mode="r")
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    assert got.metadata.to_dict()["data_type"] == want.metadata.to_dict()["data_type"], name
    assert got.metadata.to_dict()["codecs"][:-1] == want.metadata.to_dict()["codecs"][:-1], name
    assert got[:].tobytes() == want[:].tobytes(), (name, got[:], want[:])
    assert np.asarray(got.fill_value).tobytes() == np.asarray(want.fill_value).tobytes(), name
"#;

const READ_RUST: &str = r#"
import sys, warnings, numpy as np, zarr
warnings.simplefilter("ignore")
a = zarr.open_array(sys.argv[1], mode="r")
assert a.metadata.to_dict()["data_type"]["name"] == "struct", a.metadata.to_dict()["data_type"]
got = a[:]
assert got["id"].tolist() == [5, -6, 9], got
assert got["x"].tolist() == [0.25, -1.5, 9.0], got
assert a.fill_value["id"] == 9 and a.fill_value["x"] == 9.0, a.fill_value
"#;

fn zarrdb(args: &[&str]) -> String {
    let out = run(Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args)).unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn zarr_34_types_and_codecs_import_check_and_export() {
    let Some(python) = std::env::var_os("ZARRDB_PYTHON_ZARR34").map(PathBuf::from) else {
        println!("skipped: ZARRDB_PYTHON_ZARR34 is not set (a python with zarr 3.4 and cast-value-rs)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    run(Command::new(&python).args(["-c", WRITE, &path("src")])).unwrap();
    std::fs::create_dir(path("out")).unwrap();
    let mut names = vec!["records.zarr", "scaled.zarr"];
    if dir.path().join("src/cast.zarr").exists() {
        names.push("cast.zarr");
    } else {
        println!("cast_value not checked: {} has no cast-value-rs", python.display());
    }
    for name in &names {
        let db = path(&format!("{name}db"));
        zarrdb(&["import", &path(&format!("src/{name}")), &db]);
        assert!(zarrdb(&["check", &db]).contains(": 0 problems"), "{name}");
        let info = zarrdb(&["info", &db, "/"]);
        assert!(!info.is_empty(), "{name}");
        let values: serde_json::Value = serde_json::from_str(&zarrdb(&["cat", &db, "/", "--json"])).unwrap();
        if *name == "records.zarr" {
            assert_eq!(values[0]["id"], 1, "{values}");
            assert_eq!(values[1]["tag"], "bcd", "{values}");
            assert_eq!(values[4]["p"]["x"], 1.5, "{values}");
        }
        zarrdb(&["export", &db, &path(&format!("out/{name}"))]);
    }
    let mut read = vec!["-c".to_owned(), READ.to_owned(), path("src"), path("out")];
    read.extend(names.iter().map(|n| (*n).to_owned()));
    run(Command::new(&python).args(&read)).unwrap();
}

#[test]
fn struct_arrays_written_from_rust_read_in_zarr_34() {
    let Some(python) = std::env::var_os("ZARRDB_PYTHON_ZARR34").map(PathBuf::from) else {
        println!("skipped: ZARRDB_PYTHON_ZARR34 is not set (a python with zarr 3.4)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("rust.zarr");
    let store: Arc<dyn Store> = Arc::new(DirectoryStore::create(&folder).unwrap());
    let fields = vec![("id".into(), DataType::Int32), ("x".into(), DataType::Float64)];
    let record =
        DataType::Structured(Arc::new(StructuredType::new(fields).unwrap().with_spelling(StructSpelling::Struct)));
    let fill = FillValue::from_json(&serde_json::json!({"id": 9, "x": 9.0}), record.clone()).unwrap();
    let mut meta = ArrayMetadata::new(record, vec![3], vec![2]);
    meta.fill_value = fill;
    let a = Array::create(store, "/", meta).unwrap();
    let bytes: Vec<u8> = [(5i32, 0.25f64), (-6, -1.5)]
        .iter()
        .flat_map(|(id, x)| id.to_le_bytes().into_iter().chain(x.to_le_bytes()))
        .collect();
    a.write_region_bytes(&[0], &[2], &bytes).unwrap();
    run(Command::new(&python).args(["-c", READ_RUST, folder.to_str().unwrap()])).unwrap();
}
