//! numcodecs codecs zarrdb knows but cannot run (here the checksum zarr-python writes as
//! `numcodecs.jenkins_lookup3`): such an array imports, lists
//! and exports with its chunks byte for byte, so zarr-python reads the export; reading or writing
//! its values through zarrdb fails with an error that names the codec. A name nobody knows stays
//! an unknown codec.

#[path = "common/harness.rs"]
#[expect(dead_code, reason = "values are compared by zarr-python, not byte for byte")]
mod harness;

use std::process::Command;
use std::sync::Arc;

use harness::{python, run};
use zarrdb::error::CodecError;
use zarrdb::metadata::NamedConfig;
use zarrdb::{Array, ArrayMetadata, DataType, Error, MemoryStore, Store};

const WRITE: &str = r#"
import sys, warnings, numpy as np, zarr, numcodecs.zarr3 as nz
warnings.simplefilter("ignore")
root = zarr.open_group(sys.argv[1], mode="w")
for name, codec in [("jenkins_lookup3", nz.JenkinsLookup3())]:
    a = root.create_array(name, shape=(10,), chunks=(4,), dtype="int32", compressors=[codec])
    a[:] = np.arange(10) * 3
"#;

const READ: &str = r#"
import sys, warnings, numpy as np, zarr
warnings.simplefilter("ignore")
root = zarr.open_group(sys.argv[1], mode="r")
for name in ("jenkins_lookup3",):
    assert (root[name][:] == np.arange(10) * 3).all(), name
"#;

fn zarrdb(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args).output().unwrap()
}

#[test]
fn arrays_in_codecs_zarrdb_cannot_run_import_and_export_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    run(Command::new(python()).args(["-c", WRITE, &path("src.zarr")])).unwrap();
    let import = zarrdb(&["import", &path("src.zarr"), &path("db")]);
    assert!(import.status.success(), "{}", String::from_utf8_lossy(&import.stderr));
    let cat = zarrdb(&["cat", &path("db"), "/jenkins_lookup3"]);
    let stderr = String::from_utf8_lossy(&cat.stderr);
    assert_eq!(cat.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("\"numcodecs.jenkins_lookup3\" is known but zarrdb cannot run it"), "{stderr}");
    let tree = zarrdb(&["tree", &path("db")]);
    assert!(String::from_utf8_lossy(&tree.stdout).contains("numcodecs.jenkins_lookup3"));
    let export = zarrdb(&["export", &path("db"), &path("out.zarr")]);
    assert!(export.status.success(), "{}", String::from_utf8_lossy(&export.stderr));
    run(Command::new(python()).args(["-c", READ, &path("out.zarr")])).unwrap();
}

#[test]
fn values_fail_naming_the_codec_and_unknown_names_stay_unknown() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut meta = ArrayMetadata::new(DataType::Float32, vec![4], vec![2]);
    let codecs = serde_json::json!([{"name": "numcodecs.zfpy", "configuration": {"mode": 4, "tolerance": 0.1}}]);
    meta.codecs = NamedConfig::parse_list(&codecs).unwrap();
    let a = Array::create(store.clone(), "/z", meta.clone()).unwrap();
    let unavailable = |e: Error| matches!(e, Error::Codec { source: CodecError::Unavailable { ref name }, .. } if name == "numcodecs.zfpy");
    assert!(unavailable(a.write_region(&[0], &[2], &[1.0f32, 2.0]).unwrap_err()));
    store.set("z/c/0", b"anything").unwrap();
    assert!(unavailable(a.read_all::<f32>().unwrap_err()));
    meta.codecs = NamedConfig::parse_list(&serde_json::json!([{"name": "numcodecs.nosuch"}])).unwrap();
    let err = Array::create(store, "/u", meta).unwrap_err();
    assert!(matches!(err, Error::Codec { source: CodecError::UnknownCodec { .. }, .. }), "{err}");
}

#[test]
fn a_region_write_in_such_an_array_touches_nothing() {
    // Chunk 0 is written as all fill value, which is erased without encoding: the write must
    // still fail before it, or a transaction would commit the erasure with the failed write.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut meta = ArrayMetadata::new(DataType::Float32, vec![4], vec![2]);
    meta.codecs =
        NamedConfig::parse_list(&serde_json::json!([{"name": "numcodecs.zfpy", "configuration": {"mode": 4}}]))
            .unwrap();
    let a = Array::create(store.clone(), "/z", meta).unwrap();
    store.set("z/c/0", b"stored by another library").unwrap();
    assert!(matches!(a.check_codecs(), Err(Error::Codec { source: CodecError::Unavailable { .. }, .. })));
    assert!(a.write_region(&[0], &[4], &[0.0f32, 0.0, 1.0, 2.0]).is_err());
    assert_eq!(store.get("z/c/0").unwrap().as_deref(), Some(&b"stored by another library"[..]));
}
