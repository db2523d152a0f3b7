//! The command line on a bucket database (`zarrdb+s3://`, on a real S3 server: SeaweedFS on
//! 127.0.0.1): the editing commands write into it as into a database file, `tree`, `info`, `cat`
//! and `check` read it, `cp` copies a database file into it and back out, and `diff` finds the
//! three equal.

#[path = "common/cli.rs"]
mod cli;
#[path = "common/seaweed.rs"]
mod seaweed;

use cli::ok_text;

#[test]
fn a_bucket_database_is_edited_read_and_copied() {
    let dir = tempfile::tempdir().unwrap();
    let bucket = format!("zarrdb+{}", seaweed::bucket("cli-bucket-db"));
    ok_text(&[
        "create", &bucket, "/grid/t", "--dtype", "float32", "--shape", "40,30", "--chunks", "10,10", "--codec", "zstd",
    ]);
    ok_text(&["create", &bucket, "/grid/s", "--dtype", "int16", "--shape", "64", "--chunks", "8", "--shard", "32"]);
    ok_text(&["attrs", &bucket, "/grid", "--set", "title=in a bucket"]);
    let npy = dir.path().join("t.npy");
    let mut bytes = zarrdb::transfer::NpyHeader::new(&zarrdb::DataType::Float32, &[10, 30], "t").unwrap().to_bytes();
    bytes.extend((0..300).flat_map(|i| (i as f32 / 7.0).to_le_bytes()));
    std::fs::write(&npy, bytes).unwrap();
    ok_text(&["write", &bucket, "/grid/t", npy.to_str().unwrap(), "--region", "10:20,:"]);

    let tree = ok_text(&["tree", &bucket]);
    assert!(tree.contains("grid") && tree.contains('t') && tree.contains('s'), "{tree}");
    let info: serde_json::Value = serde_json::from_str(&ok_text(&["info", &bucket, "/grid/t", "--json"])).unwrap();
    assert_eq!(info["chunks_initialized"], 3);
    let row = ok_text(&["cat", &bucket, "/grid/t", "--region", "12,:", "--json"]);
    assert!(row.contains(&format!("{}", 60.0f32 / 7.0)), "{row}");
    assert!(ok_text(&["check", &bucket]).contains(": 0 problems"));

    let local = dir.path().join("copy.zarrdb").display().to_string();
    ok_text(&["cp", &bucket, &local]);
    assert_eq!(ok_text(&["diff", &bucket, &local]), "");
    let second = format!("zarrdb+{}", seaweed::bucket("cli-bucket-db-copy"));
    ok_text(&["cp", &local, &second]);
    assert_eq!(ok_text(&["diff", &second, &bucket]), "");
    assert_eq!(ok_text(&["tree", &second]), tree);
}
