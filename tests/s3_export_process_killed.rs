//! `zarrdb export DB s3://...` killed (SIGKILL) while it writes chunks: the destination holds
//! chunks but no root `zarr.json` and no document of the array, so a reader finds no hierarchy;
//! the claim the dead process left refuses the next export, naming that process, until
//! `--overwrite`, which publishes the whole hierarchy and removes the claim.

#[path = "common/cli.rs"]
mod cli;
#[path = "common/s3_data.rs"]
mod s3_data;
#[path = "common/seaweed.rs"]
mod seaweed;

use std::process::Command;
use std::time::{Duration, Instant};

use cli::{ok_text, zarrdb};
use zarrdb::store::{ListableStore, ObjectStore, ReadableStore};

/// Enough chunks that the export is still writing them when the test sees the first ones.
const CHUNKS: u64 = 6000;

#[test]
fn an_export_killed_midway_leaves_no_hierarchy_and_a_claim() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("source.zarrdb");
    drop(s3_data::database(&path, CHUNKS));
    let db = path.to_str().unwrap();
    let remote = seaweed::bucket("export-process-killed");
    let store = ObjectStore::open(&remote).unwrap();

    let mut export = Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(["export", db, &remote]).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while store.list().unwrap().len() < 100 {
        assert!(export.try_wait().unwrap().is_none(), "the export ended before it was killed");
        assert!(Instant::now() < deadline, "the export wrote nothing within 60 s");
        std::thread::sleep(Duration::from_millis(10));
    }
    export.kill().unwrap();
    export.wait().unwrap();

    let keys = store.list().unwrap();
    assert!(keys.len() < CHUNKS as usize + 1, "killed while writing chunks ({} keys)", keys.len());
    assert_eq!(store.get("zarr.json").unwrap(), None, "no root document: readers find no hierarchy");
    assert_eq!(store.get("many/a/zarr.json").unwrap(), None);
    assert!(keys.contains(&"__zarrdb/export".to_owned()), "the dead export's claim stays");

    let refused = zarrdb(&["export", db, &remote]);
    assert_eq!(refused.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains(&format!("another export (process {}", export.id())), "{stderr}");
    ok_text(&["export", db, &remote, "--overwrite"]);
    assert_eq!(ok_text(&["diff", db, &remote]), "");
    assert!(store.get("__zarrdb/export").unwrap().is_none());
}
