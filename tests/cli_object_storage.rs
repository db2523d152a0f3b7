//! The command line on object storage, against a real S3 server (SeaweedFS on 127.0.0.1,
//! `tests/common/seaweed.rs`): `zarrdb cp` publishes a database's hierarchy to `s3://` (every
//! chunk and document, sharded arrays and implicit groups included), `tree`, `info`, `cat` and
//! `check` read it there, `diff` finds it equal to the database, and `cp` brings it back into a
//! new database equal to the first. Editing commands refuse `s3://`.

#[path = "common/cli.rs"]
mod cli;
#[path = "common/seaweed.rs"]
mod seaweed;

use cli::{ok_text, zarrdb};
use serde_json::Value;

#[test]
fn a_database_goes_to_s3_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data.zarrdb").display().to_string();
    ok_text(&[
        "create", &db, "/grid/t", "--dtype", "float32", "--shape", "40,30", "--chunks", "10,10", "--codec", "zstd",
    ]);
    ok_text(&["create", &db, "/grid/s", "--dtype", "int16", "--shape", "64", "--chunks", "8", "--shard", "32"]);
    ok_text(&["create", &db, "/implicit/deep/x", "--dtype", "uint8", "--shape", "5"]);
    ok_text(&["attrs", &db, "/grid", "--set", "title=on s3"]);
    // Fill values everywhere but one written region, through a .npy of the CLI's own making.
    let npy = dir.path().join("t.npy");
    let mut bytes = zarrdb::transfer::NpyHeader::new(&zarrdb::DataType::Float32, &[10, 30], "t").unwrap().to_bytes();
    bytes.extend((0..300).flat_map(|i| (i as f32 / 7.0).to_le_bytes()));
    std::fs::write(&npy, bytes).unwrap();
    ok_text(&["write", &db, "/grid/t", npy.to_str().unwrap(), "--region", "10:20,:"]);

    let remote = seaweed::bucket("cli");
    ok_text(&["cp", &db, &remote]);
    let tree = ok_text(&["tree", &remote]);
    assert_eq!(tree, ok_text(&["tree", &db]), "the tree read from s3");
    let info: Value = serde_json::from_str(&ok_text(&["info", &remote, "/grid/t", "--json"])).unwrap();
    assert_eq!(info["chunks_initialized"], 3);
    assert_eq!(
        ok_text(&["cat", &remote, "/grid/t", "--region", "12,:", "--json"]),
        ok_text(&["cat", &db, "/grid/t", "--region", "12,:", "--json"])
    );
    assert!(ok_text(&["check", &remote]).contains(": 0 problems"));
    assert_eq!(ok_text(&["diff", &db, &remote]), "", "s3 holds what the database holds");

    let back = dir.path().join("back.zarrdb").display().to_string();
    ok_text(&["cp", &remote, &back]);
    assert_eq!(ok_text(&["diff", &db, &back]), "");

    let refused = zarrdb(&["attrs", &remote, "/grid", "--set", "k=1"]);
    assert_eq!(refused.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not edited in place"));
}
