//! Databases written by earlier zarrdb builds (`tests/fixtures/format/`, one per format that landed
//! on main; README.md there says which commit and program made each) open with this build. For
//! each, on a copy: a read-only open reads every value of `manifest.json` and leaves the files
//! byte-identical; `zarrdb check` finds no problem; a writable open reads every value again,
//! writes, and after a reopen everything (old and new) reads back, `check` still finds nothing,
//! and the format record is the one the manifest says this build leaves (the current format, or
//! format 1 for LMDB databases with bare values, which are read and written as they are).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Group};

/// The format this build writes (docs/format.md, "Formats").
const FORMAT: u32 = 5;

#[path = "common/fixture_files.rs"]
mod fixture_files;
#[path = "common/raw_marker.rs"]
mod raw_marker;

use fixture_files::{copy, files};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format")
}

fn backend(name: &str) -> Backend {
    match name {
        "redb" => Backend::Redb,
        "lmdb" => Backend::Lmdb,
        "sled" => Backend::Sled,
        other => panic!("unknown backend {other}"),
    }
}

/// The values of an array as the manifest gives them: a list, or `(i * mul + add) % modulo`.
fn expected_values(array: &Value) -> Vec<i64> {
    if let Some(values) = array.get("values") {
        return values.as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
    }
    let p = &array["pattern"];
    let n = |k: &str| p[k].as_u64().unwrap() as usize;
    (0..n("len")).map(|i| ((i * n("mul") + n("add")) % n("modulo")) as i64).collect()
}

fn read_values(array: &Array) -> Vec<i64> {
    match array.data_type() {
        DataType::UInt8 => array.read_all::<u8>().unwrap().into_iter().map(i64::from).collect(),
        DataType::Int16 => array.read_all::<i16>().unwrap().into_iter().map(i64::from).collect(),
        DataType::Int32 => array.read_all::<i32>().unwrap().into_iter().map(i64::from).collect(),
        DataType::Int64 => array.read_all::<i64>().unwrap(),
        other => panic!("no fixture array is {other:?}"),
    }
}

/// Every group and array of `content` reads back from `db` as listed, and nothing else is there.
fn check_content(db: &Database, content: &Value, what: &str) {
    let store = db.store();
    for (path, attributes) in content["groups"].as_object().unwrap() {
        let group = Group::open(store.clone(), path).unwrap_or_else(|e| panic!("{what}: group {path}: {e}"));
        assert_eq!(Value::Object(group.attributes()), *attributes, "{what}: attributes of {path}");
    }
    for (path, expected) in content["arrays"].as_object().unwrap() {
        let array = Array::open(store.clone(), path).unwrap_or_else(|e| panic!("{what}: array {path}: {e}"));
        assert_eq!(json!(array.data_type().to_string()), expected["data_type"], "{what}: data type of {path}");
        assert_eq!(json!(array.shape()), expected["shape"], "{what}: shape of {path}");
        assert_eq!(json!(array.chunk_shape()), expected["chunk_shape"], "{what}: chunks of {path}");
        assert_eq!(Value::Object(array.attributes().clone()), expected["attributes"], "{what}: attributes of {path}");
        assert_eq!(
            array.stored_chunks().unwrap().len() as u64,
            expected["stored_chunks"].as_u64().unwrap(),
            "{what}: {path}"
        );
        assert!(read_values(&array) == expected_values(expected), "{what}: values of {path} differ");
    }
    // Every node of the database is listed: one `zarr.json` per node, nothing else.
    let mut nodes: Vec<String> = store
        .list()
        .unwrap()
        .into_iter()
        .filter_map(|key| key.strip_suffix("zarr.json").map(|dir| format!("/{}", dir.trim_end_matches('/'))))
        .collect();
    nodes.sort();
    let mut listed: Vec<String> = content["groups"].as_object().unwrap().keys().cloned().collect();
    listed.extend(content["arrays"].as_object().unwrap().keys().cloned());
    listed.sort();
    assert_eq!(nodes, listed, "{what}: the nodes");
}

/// `zarrdb check` of `locator`: no problem, every chunk of `content` checked.
fn check_cli(locator: &str, content: &Value, what: &str) {
    let out =
        std::process::Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(["check", "--json", locator]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{what}: check failed: {said}{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_str(&said).unwrap();
    assert_eq!(report["problems"], json!([]), "{what}: {said}");
    let chunks: u64 =
        content["arrays"].as_object().unwrap().values().map(|a| a["stored_chunks"].as_u64().unwrap()).sum();
    assert_eq!(report["chunks"], json!(chunks), "{what}: {said}");
}

/// What this test writes into each fixture after opening it, applied to `content` as well.
fn write_more(db: &Database, content: &mut Value) {
    let store = db.store();
    let array = Array::create(store.clone(), "/g/new", ArrayMetadata::new(DataType::Int16, vec![5], vec![2])).unwrap();
    array.write_region(&[0], &[5], &[1i16, -2, 3, -4, 5]).unwrap();
    Array::open(store.clone(), "/g/small").unwrap().write_region(&[2], &[2], &[100i32, 101]).unwrap();
    // The large value again, replaced whole: new segments (redb) or a new generation of pieces (sled).
    let big: Vec<u8> = (0..70_000usize).map(|i| (i % 7) as u8).collect();
    Array::open(store.clone(), "/big").unwrap().write_region(&[0], &[70_000], &big).unwrap();
    let mut group = Group::open(store.clone(), "/g").unwrap();
    let mut attributes = group.attributes();
    attributes.insert("touched".into(), json!(true));
    group.set_attributes(attributes.clone()).unwrap();

    content["groups"]["/g"] = Value::Object(attributes);
    content["arrays"]["/g/new"] = json!({
        "data_type": "int16", "shape": [5], "chunk_shape": [2], "attributes": {}, "stored_chunks": 3,
        "values": [1, -2, 3, -4, 5]
    });
    content["arrays"]["/g/small"]["values"][2] = json!(100);
    content["arrays"]["/g/small"]["values"][3] = json!(101);
    content["arrays"]["/big"]["pattern"] = json!({"len": 70_000, "mul": 1, "add": 0, "modulo": 7});
}

fn locator(backend: Backend, path: &Path) -> String {
    format!("{}:{}", backend.name(), path.display())
}

#[test]
fn every_fixture_opens_reads_checks_and_writes() {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("manifest.json")).unwrap()).expect("manifest.json");
    let current = format!(r#"{{"zarrdb_format":{FORMAT},"zarrdb_version":"{}"}}"#, env!("CARGO_PKG_VERSION"));
    let list = manifest["fixtures"].as_array().unwrap();
    assert!(list.len() >= 9, "a fixture for every format of every backend");
    let dir = tempfile::tempdir().unwrap();
    for fixture in list {
        let name = fixture["name"].as_str().unwrap();
        let backend = backend(fixture["backend"].as_str().unwrap());
        let source = fixtures().join(fixture["path"].as_str().unwrap());
        let path = dir.path().join(fixture["path"].as_str().unwrap());
        copy(&source, &path);
        let mut content = manifest["content"].clone();
        content["groups"]["/"] = fixture["root_attributes"].clone();

        let before = files(&path);
        let db =
            Database::builder().backend(backend).read_only(true).open(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_content(&db, &content, &format!("{name}, read-only"));
        drop(db);
        let after = files(&path);
        assert!(before == after, "{name}: a read-only open changed the files");
        check_cli(&locator(backend, &path), &content, name);

        let db = Database::builder().backend(backend).open(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_content(&db, &content, &format!("{name}, writable"));
        write_more(&db, &mut content);
        check_content(&db, &content, &format!("{name}, after the writes"));
        drop(db);

        let db = Database::builder().backend(backend).open(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_content(&db, &content, &format!("{name}, reopened"));
        drop(db);
        check_cli(&locator(backend, &path), &content, name);
        let record = raw_marker::raw_marker(backend, &path).expect("a format record");
        let expected = match fixture["record_after_writing"].as_str().unwrap() {
            "current" => current.as_str(),
            other => other,
        };
        assert_eq!(String::from_utf8_lossy(&record), expected, "{name}: the format record after a writable open");
    }
}
