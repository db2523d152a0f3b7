//! `zarrdb bench --workload group_commit_new` runs on a database with history and one without,
//! reads back the last chunks each writer wrote (the bench fails when one lost its write), and
//! reports one figure per thread count. No timing is judged here.

#[path = "common/cli.rs"]
mod cli;

#[test]
fn group_commit_new_reports_a_checked_figure_per_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_str().unwrap();
    let args = ["bench", "--workload", "group_commit_new", "--backend", "redb", "--backend", "lmdb-history"];
    let out = cli::ok_text(&[&args[..], &["--runs", "1", "--json", "--durability", "fast", "--dir", dir]].concat());
    let figures: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let seen: Vec<(&str, &str, u64)> = figures
        .iter()
        .map(|f| (f["workload"].as_str().unwrap(), f["backend"].as_str().unwrap(), f["threads"].as_u64().unwrap()))
        .collect();
    let want = [("redb", 1), ("redb", 8), ("lmdb-history", 1), ("lmdb-history", 8)];
    assert_eq!(seen, want.map(|(b, t)| ("group_commit_new", b, t)).to_vec());
    assert!(figures.iter().all(|f| f["commits_per_s"].as_u64().unwrap() > 0), "{out}");
}
