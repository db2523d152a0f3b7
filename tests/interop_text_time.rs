//! Text, byte-string and time data types against zarr-python 3.1: arrays that zarr-python wrote
//! (v3 and v2, every kind, edge chunks, unwritten fill elements, non-ASCII and empty text, NaT)
//! are imported and read through the Rust API with the values zarr-python recorded
//! (`tests/interop/text_time_fixtures.py`), pass `zarrdb check`, and are exported to a v3
//! folder zarr-python reads back identically; and arrays that zarrdb writes from Rust values are
//! read by zarr-python as those values.

#[path = "common/harness.rs"]
#[expect(dead_code, reason = "this suite compares values, not bytes: the harness's byte comparison is unused")]
mod harness;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use serde_json::Value;
use zarrdb::array::Time;
use zarrdb::metadata::TimeUnit;
use zarrdb::{
    Array, ArrayMetadata, DataType, Database, DirectoryStore, ExportOptions, FillValue, ImportOptions, Store,
};

use harness::{python, run, REPO};

fn fixtures(cmd: &[&str]) -> Result<String, String> {
    let script = Path::new(REPO).join("tests/interop/text_time_fixtures.py");
    let out = run(Command::new(python()).arg(script).args(cmd))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn zarrdb(args: &[&str]) -> Result<String, String> {
    let out = run(Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn base64(text: &str) -> Vec<u8> {
    // Through a fill value, the crate's own base64 reading.
    FillValue::from_json(&Value::from(text), DataType::Bytes).unwrap().as_le_bytes().to_vec()
}

/// The values of `array` in the JSON notation of the fixture script.
fn values_of(array: &Array, kind: &str) -> Vec<Value> {
    match kind {
        "text" => array.read_all_items::<String>().unwrap().into_iter().map(Value::from).collect(),
        "bytes" => array
            .read_all_items::<Vec<u8>>()
            .unwrap()
            .into_iter()
            .map(|b| FillValue::from_le_bytes(b).to_json(DataType::Bytes))
            .collect(),
        _ => array.read_all::<Time>().unwrap().into_iter().map(|t| Value::from(t.0)).collect(),
    }
}

/// The fixtures written into `dir`: the path of expected.json and its content.
fn write_fixtures(dir: &Path) -> (std::path::PathBuf, serde_json::Map<String, Value>) {
    fixtures(&["write", dir.to_str().unwrap()]).unwrap();
    let expected_path = dir.join("expected.json");
    let expected = serde_json::from_slice(&std::fs::read(&expected_path).unwrap()).unwrap();
    (expected_path, expected)
}

#[test]
fn zarr_python_arrays_import_read_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let (expected_path, expected) = write_fixtures(dir.path());
    for layout in ["v3", "v2"] {
        let db_path = dir.path().join(format!("{layout}.zarrdb"));
        let db = Database::create(&db_path).unwrap();
        db.import(dir.path().join(format!("{layout}.zarr")), &ImportOptions::default()).unwrap();
        for (path, want) in &expected {
            let array = Array::open(db.store(), path).unwrap();
            let kind = want["kind"].as_str().unwrap();
            assert_eq!(values_of(&array, kind), want["values"].as_array().unwrap().clone(), "{layout} {path}");
        }
        let export = dir.path().join(format!("{layout}-export.zarr"));
        db.export(&export, &ExportOptions::default()).unwrap();
        drop(db);
        let db_arg = db_path.to_str().unwrap();
        let check = zarrdb(&["check", db_arg]).unwrap();
        assert!(check.contains("0 problems"), "{layout}: {check}");
        let text = zarrdb(&["cat", db_arg, "/vlen_text", "--json"]).unwrap();
        assert_eq!(text.trim(), r#"["alpha","","béta","日本語","😀 emoji","",""]"#);
        let err =
            run(Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(["cat", db_arg, "/vlen_text", "--raw"])).unwrap_err();
        assert!(err.contains("no fixed-size bytes"), "{err}");
        fixtures(&["read", export.to_str().unwrap(), expected_path.to_str().unwrap()]).unwrap();
    }
}

#[test]
fn zarrdb_written_arrays_read_in_zarr_python() {
    let dir = tempfile::tempdir().unwrap();
    let (expected_path, expected) = write_fixtures(dir.path());
    let folder = dir.path().join("zarrdb.zarr");
    let store: Arc<dyn Store> = Arc::new(DirectoryStore::create(&folder).unwrap());
    zarrdb::Group::create(store.clone(), "/", serde_json::Map::new()).unwrap();
    let ns = DataType::DateTime64 { unit: TimeUnit::Nanosecond, scale_factor: 1 };
    let s10 = DataType::TimeDelta64 { unit: TimeUnit::Second, scale_factor: 10 };
    for (path, want) in &expected {
        let values = want["values"].as_array().unwrap();
        let data_type = match path.as_str() {
            "/vlen_text" => DataType::String,
            "/vlen_bytes" => DataType::Bytes,
            "/utf32" | "/utf32_be" => DataType::FixedLengthUtf32 { length_bytes: 160 },
            "/nt_bytes" => DataType::NullTerminatedBytes { length_bytes: 33 },
            "/datetime_ns" => ns.clone(),
            _ => s10.clone(),
        };
        let mut meta = ArrayMetadata::new(data_type.clone(), vec![7], vec![3]);
        if matches!(data_type, DataType::DateTime64 { .. } | DataType::TimeDelta64 { .. }) {
            meta.fill_value = FillValue::from_json(&Value::from("NaT"), data_type).unwrap();
        }
        let array = Array::create(store.clone(), path, meta).unwrap();
        // The last element stays unwritten: zarr-python must read the fill value there.
        let n = values.len() - 1;
        match want["kind"].as_str().unwrap() {
            "text" => {
                let items: Vec<String> = values[..n].iter().map(|v| v.as_str().unwrap().to_owned()).collect();
                array.write_items(&[0], &[n as u64], &items).unwrap();
            }
            "bytes" => {
                let items: Vec<Vec<u8>> = values[..n].iter().map(|v| base64(v.as_str().unwrap())).collect();
                array.write_items(&[0], &[n as u64], &items).unwrap();
            }
            _ => {
                let ticks: Vec<Time> = values[..n].iter().map(|v| Time(v.as_i64().unwrap())).collect();
                array.write_region(&[0], &[n as u64], &ticks).unwrap();
            }
        }
    }
    fixtures(&["read", folder.to_str().unwrap(), expected_path.to_str().unwrap()]).unwrap();
}
