//! Object storage with real clients (the issue "Beyond one machine: Zarr on S3-compatible object
//! storage", acceptance 1), against SeaweedFS on 127.0.0.1 (`tests/common/seaweed.rs`):
//!
//! * `zarrdb export` to `s3://` of databases imported from the fixtures of
//!   `tests/interop/transfer_write.py` (zarr-python v3: many data types and codecs, sharding,
//!   partly written arrays, implicit groups, a 0-d array; tensorstore v3; zarr-python v2), then
//!   zarr-python (its `ObjectStore` over obstore) and tensorstore (its `s3` kvstore) read every
//!   node there with the values, shapes and attributes of the fixture's manifest
//!   (`transfer_check.py`).
//! * zarr-python writes one hierarchy into a folder and into the bucket (`s3_write.py`, v3 and
//!   v2); `zarrdb import` of the bucket gives a database equal (`zarrdb diff`) to the import of the
//!   folder, and `tree`, `cat` and `check` read the bucket as they read the folder (a v2 one as the
//!   v3 hierarchy an import would make); `zarrdb export` of that database to the bucket is read
//!   by zarr-python with the values it wrote (every core numeric type, strings, sharding).
//! * the text, byte-string and time types (`text_time_fixtures.py`) exported to the bucket are
//!   read there by zarr-python with the values it recorded.
//!
//! Python comes from `ZARRDB_PYTHON` or `.venv`; without it the tests fail rather than skip.

#[path = "common/cli.rs"]
mod cli;
#[path = "common/seaweed.rs"]
mod seaweed;
#[path = "common/transfer.rs"]
#[expect(dead_code, reason = "only the fixtures and their checker are used, not the round trips")]
mod transfer;

use std::path::Path;
use std::process::Command;

use cli::ok_text;
use transfer::harness;

#[test]
fn exports_to_s3_are_read_by_zarr_python_and_tensorstore() {
    let fixtures = transfer::fixtures();
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for name in ["zp_v3_dir", "ts_v3_dir", "zp_v2_dir"] {
        let db = dir.path().join(format!("{name}.zarrdb"));
        let db = db.to_str().unwrap();
        ok_text(&["import", fixtures.source(name).to_str().unwrap(), db]);
        let remote = seaweed::bucket(name);
        ok_text(&["export", db, &remote]);
        if let Err(e) = fixtures.check(name, &[&remote]) {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_hierarchy_zarr_python_wrote_to_s3_imports_as_from_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["3", "2"] {
        let folder = dir.path().join(format!("v{format}.zarr"));
        let remote = seaweed::bucket(&format!("zarr-python-v{format}"));
        let script = Path::new(harness::REPO).join("tests/interop/s3_write.py");
        harness::run(Command::new(harness::python()).arg(script).arg(&folder).arg(&remote).arg(format))
            .unwrap_or_else(|e| panic!("zarr-python writing v{format}: {e}"));
        let from_folder = dir.path().join(format!("folder-v{format}.zarrdb"));
        let from_bucket = dir.path().join(format!("bucket-v{format}.zarrdb"));
        let (from_folder, from_bucket) = (from_folder.to_str().unwrap(), from_bucket.to_str().unwrap());
        let folder_said = ok_text(&["import", folder.to_str().unwrap(), from_folder]);
        let bucket_said = ok_text(&["import", &remote, from_bucket]);
        // "imported Zarr vN hierarchy SOURCE into ...: N nodes, N chunks, N bytes": equal counts.
        let counts = |said: &str| said.rsplit_once(": ").map(|(_, counts)| counts.to_owned()).unwrap();
        assert_eq!(counts(&bucket_said), counts(&folder_said), "v{format}: {bucket_said} / {folder_said}");
        assert!(bucket_said.starts_with(&format!("imported Zarr v{format} hierarchy {remote} into")));
        assert_eq!(ok_text(&["diff", from_folder, from_bucket]), "", "v{format}: the two imports differ");
        let tree = ok_text(&["tree", from_bucket]);
        assert!(tree.contains("deeper") && tree.contains("zero_d"), "v{format}: {tree}");
        // Read where it lies, v2 included (as the v3 hierarchy an import would make).
        let folder = folder.to_str().unwrap();
        assert_eq!(ok_text(&["tree", &remote]), ok_text(&["tree", folder]), "v{format}: tree");
        for array in ["/t", "/s", "/inner/deeper/u"] {
            let region = if array == "/inner/deeper/u" { ":,1:4" } else { "3:9,0:20" };
            let cat = |at: &str| ok_text(&["cat", at, array, "--region", region, "--json"]);
            assert_eq!(cat(&remote), cat(folder), "v{format}: cat {array}");
        }
        assert!(ok_text(&["check", &remote]).contains(": 0 problems"), "v{format}: check");
        // And back out: zarr-python reads zarrdb's export of the import as it wrote the folder.
        let exported = seaweed::bucket(&format!("exported-v{format}"));
        ok_text(&["export", from_bucket, &exported]);
        let script = Path::new(harness::REPO).join("tests/interop/s3_write.py");
        harness::run(Command::new(harness::python()).arg(script).arg("compare").arg(folder).arg(&exported))
            .unwrap_or_else(|e| panic!("v{format}: zarr-python reads the export differently: {e}"));
    }
}

/// The text, byte-string and time types zarr-python writes (tests/interop/text_time_fixtures.py,
/// v3 and v2), imported, exported to the bucket and read there by zarr-python with the values it
/// recorded.
#[test]
fn text_and_time_types_exported_to_s3_are_read_by_zarr_python() {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(harness::REPO).join("tests/interop/text_time_fixtures.py");
    harness::run(Command::new(harness::python()).arg(&script).arg("write").arg(dir.path())).unwrap();
    let expected = dir.path().join("expected.json");
    for layout in ["v3", "v2"] {
        let db = dir.path().join(format!("{layout}.zarrdb"));
        let db = db.to_str().unwrap();
        ok_text(&["import", dir.path().join(format!("{layout}.zarr")).to_str().unwrap(), db]);
        let remote = seaweed::bucket(&format!("text-time-{layout}"));
        ok_text(&["export", db, &remote]);
        harness::run(Command::new(harness::python()).arg(&script).arg("read").arg(&remote).arg(&expected))
            .unwrap_or_else(|e| panic!("{layout}: {e}"));
    }
}
