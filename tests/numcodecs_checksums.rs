//! numcodecs' checksums `crc32`, `adler32` (at the start and at the end) and `fletcher32`,
//! written by zarr-python: as v3 codecs (`numcodecs.<id>`), as a Zarr v2 compressor and as a v2
//! filter before a compressor. `zarrdb import` reads every value as zarr-python does, `check`
//! verifies every checksum, zarrdb encodes the values into zarr-python's chunks byte for byte,
//! a flipped byte is a checksum error, and the export reads back equal in zarr-python.

#[path = "common/harness.rs"]
#[expect(dead_code, reason = "values are compared as numbers")]
mod harness;

use std::process::Command;
use std::sync::Arc;

use harness::{python, run};
use zarrdb::error::CodecError;
use zarrdb::{Array, DirectoryStore, Error, Store};

const NAMES: [&str; 7] =
    ["v3_crc32", "v3_adler32", "v3_adler32_end", "v3_fletcher32", "v2_adler32", "v2_fletcher32", "v2_filter"];

const WRITE: &str = r#"
import sys, warnings, numpy as np, zarr, numcodecs, numcodecs.zarr3 as nz
warnings.simplefilter("ignore")
root = sys.argv[1]
v = np.arange(11, dtype="<i2") * 300 - 7
v3 = {"v3_crc32": nz.CRC32(), "v3_adler32": nz.Adler32(), "v3_adler32_end": nz.Adler32(location="end"),
      "v3_fletcher32": nz.Fletcher32()}
for name, codec in v3.items():
    a = zarr.create_array(f"{root}/{name}", shape=(11,), chunks=(4,), dtype="<i2", compressors=[codec])
    a[:] = v
for name, compressor, filters in [("v2_adler32", numcodecs.Adler32(), None),
                                  ("v2_fletcher32", numcodecs.Fletcher32(), None),
                                  ("v2_filter", numcodecs.Zlib(level=1), [numcodecs.Fletcher32()])]:
    a = zarr.create_array(f"{root}/{name}", shape=(11,), chunks=(4,), dtype="<i2", zarr_format=2,
                          compressors=compressor, filters=filters)
    a[:] = v
"#;

const READ: &str = r#"
import sys, warnings, numpy as np, zarr
warnings.simplefilter("ignore")
for name in sys.argv[2:]:
    got = zarr.open_array(f"{sys.argv[1]}/{name}", mode="r")[:]
    assert (got == np.arange(11, dtype="<i2") * 300 - 7).all(), (name, got)
"#;

fn zarrdb(args: &[&str]) -> String {
    let out = run(Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args)).unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn values() -> Vec<i16> {
    (0..11).map(|i| i * 300 - 7).collect()
}

#[test]
fn checksummed_arrays_import_check_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    run(Command::new(python()).args(["-c", WRITE, &path("src")])).unwrap();
    std::fs::create_dir(path("out")).unwrap();
    for name in NAMES {
        let db = path(&format!("{name}.zarrdb"));
        zarrdb(&["import", &path(&format!("src/{name}")), &db]);
        assert!(zarrdb(&["check", &db]).contains(": 0 problems"), "{name}");
        let got: Vec<i16> = serde_json::from_str(&zarrdb(&["cat", &db, "/", "--json"])).unwrap();
        assert_eq!(got, values(), "{name}");
        zarrdb(&["export", &db, &path(&format!("out/{name}"))]);
    }
    let mut read = vec!["-c".to_owned(), READ.to_owned(), path("out")];
    read.extend(NAMES.iter().map(|n| (*n).to_owned()));
    run(Command::new(python()).args(&read)).unwrap();
}

#[test]
fn zarrdb_writes_the_checksums_numcodecs_writes() {
    let dir = tempfile::tempdir().unwrap();
    run(Command::new(python()).args(["-c", WRITE, dir.path().to_str().unwrap()])).unwrap();
    // The v3 arrays: checksum codecs without compression, so the chunks are deterministic.
    for name in &NAMES[..4] {
        let store: Arc<dyn Store> = Arc::new(DirectoryStore::open(dir.path()).unwrap());
        let a = Array::open(store.clone(), &format!("/{name}")).unwrap();
        let mut chunk: Vec<u8> = values()[..4].iter().flat_map(|v| v.to_le_bytes()).collect();
        let stored = store.get(&format!("{name}/c/0")).unwrap().unwrap();
        assert_eq!(a.encode_chunk(&chunk).unwrap(), stored, "{name}");
        assert_eq!(a.decode_chunk(&stored[..]).unwrap(), chunk, "{name}");
        // One flipped byte of the data is caught.
        let mut damaged = stored.clone();
        let at = if name.ends_with("_end") || name.ends_with("fletcher32") { 0 } else { 4 };
        damaged[at] ^= 1;
        let err = a.decode_chunk(damaged).unwrap_err();
        assert!(matches!(err, Error::Codec { source: CodecError::ChecksumMismatch { .. }, .. }), "{name}: {err}");
        chunk[0] ^= 1;
        assert_ne!(a.encode_chunk(&chunk).unwrap(), stored, "{name}");
    }
}
