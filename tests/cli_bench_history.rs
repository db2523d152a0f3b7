//! `zarrdb bench --workload history` on every backend, at a small size: it reports the tag, the
//! durable commit of one small key without history that a tag is compared with, the diff, the
//! open and the reads of a version, and leaves nothing in `--dir` (the database without history
//! it makes beside the first is removed). No timing is judged here.

use std::process::Command;

#[test]
fn history_reports_a_tag_beside_a_small_commit_without_history() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().to_str().unwrap();
    let args = ["bench", "--workload", "history", "--backend", "redb", "--backend", "lmdb", "--backend", "sled"];
    let done = Command::new(env!("CARGO_BIN_EXE_zarrdb"))
        .args(args)
        .args(["--runs", "1", "--json", "--durability", "fast", "--dir", folder])
        .env("ZARRDB_BENCH_HISTORY_KEYS", "2000")
        .env("ZARRDB_BENCH_HISTORY_COMMITS", "5")
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let out = String::from_utf8(done.stdout).unwrap();
    let figures: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let backends: Vec<&str> = figures.iter().map(|f| f["backend"].as_str().unwrap()).collect();
    assert_eq!(backends, ["redb", "lmdb", "sled"]);
    for f in &figures {
        assert_eq!(f["workload"], "history");
        assert_eq!(f["chunk_keys"], 2000);
        assert_eq!(f["diff_keys"], 50, "{f}");
        for figure in ["tag_ms", "small_commit_ms", "diff_ms", "open_version_ms"] {
            assert!(f[figure].as_f64().unwrap() > 0.0, "{figure}: {f}");
        }
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "left in --dir: {left:?}");
}
