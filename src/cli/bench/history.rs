//! `history`: what history costs on a database that keeps it (any backend; the `-history`
//! suffix is implied). One array of one-element chunks, `ZARRDB_BENCH_HISTORY_KEYS` of them
//! (default 1,000,000), written in one commit; then
//! - tag: the time to tag the newest commit (median of 11 tags), and, alternated with the tags,
//!   a durable commit of one small key in a database of the same backend without history: what
//!   any tag costs at least on this disk (median of 11);
//! - diff: `Database::diff` of two versions 10 chunks apart, with `ZARRDB_BENCH_HISTORY_COMMITS`
//!   (default 100) commits of 10 chunks each between the base and the last (median of 11);
//! - open: the time to open the tagged base version (median of 5);
//! - read: a whole-array read of the tagged base version and of the head, alternated (median of
//!   3 each), as chunks per second.

use std::time::Instant;

use serde_json::{json, Value};
use zarrdb::db::VersionRef;
use zarrdb::{Array, ArrayMetadata, DataType};

use super::median;
use super::target::Target;
use crate::cli::CliError;

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

pub(crate) fn run(target: &Target) -> Result<Value, CliError> {
    let Some(_) = target.backend() else {
        return Err(CliError::new(format!("history: {} keeps no history (a database backend is needed)", target.name)));
    };
    let keys = setting("ZARRDB_BENCH_HISTORY_KEYS", 1_000_000);
    let commits = setting("ZARRDB_BENCH_HISTORY_COMMITS", 100);
    target.remove();
    if let Some(parent) = target.path().parent() {
        std::fs::create_dir_all(parent)?;
    }
    let db = target.builder().history(true).create(target.path())?;
    let array = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::Int32, vec![keys], vec![1]))?;
    let values: Vec<i32> = (1..=keys as i32).collect();
    let start = Instant::now();
    array.write_region(&[0], &[keys], &values)?;
    let write_s = start.elapsed().as_secs_f64();

    let main = VersionRef::Branch("main".into());
    let floor_path = target.path().with_file_name(format!("{}-small-commits", target.name));
    let floor = small_commits_beside(target, &floor_path)?;
    let (mut tag_ms, mut small_commit_ms) = (Vec::new(), Vec::new());
    for i in 0..11 {
        let start = Instant::now();
        db.tag(&format!("t{i}"), &main)?;
        tag_ms.push(ms(start));
        let start = Instant::now();
        let txn = floor.begin_write()?;
        txn.store().set("k", &[i as u8])?;
        txn.commit()?;
        small_commit_ms.push(ms(start));
    }
    drop(floor);
    super::target::remove_path(&floor_path);
    let base = VersionRef::Tag("t0".into());
    let mut last = None;
    for c in 0..commits.max(1) {
        let txn = db.begin_write()?;
        let a = Array::open(txn.store(), "/a")?;
        for i in 0..10 {
            let at = (c * 7_919 + i * 104_729) % keys;
            a.write_region(&[at], &[1], &[-(c as i32) - 1])?;
        }
        txn.commit()?;
        last = Some(db.resolve(&main)?.id);
    }
    let last = VersionRef::Commit(last.expect("one commit at least"));
    let mut diff_ms = Vec::new();
    let mut changed = 0;
    for _ in 0..11 {
        let start = Instant::now();
        changed = db.diff(&base, &last)?.len();
        diff_ms.push(ms(start));
    }
    let mut open_ms = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        drop(db.open_version(&base)?);
        open_ms.push(ms(start));
    }
    let version = db.open_version(&base)?;
    let (mut head_s, mut version_s) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let start = Instant::now();
        let read = Array::open(version.store(), "/a")?.read_all::<i32>()?;
        version_s.push(start.elapsed().as_secs_f64());
        if read != values {
            return Err(CliError::new("history: the tagged version does not read what was written"));
        }
        let start = Instant::now();
        Array::open(db.store(), "/a")?.read_all::<i32>()?;
        head_s.push(start.elapsed().as_secs_f64());
    }
    let round = |v: f64, places: i32| (v * 10f64.powi(places)).round() / 10f64.powi(places);
    Ok(json!({
        "workload": "history",
        "backend": target.name,
        "chunk_keys": keys,
        "commits_between": commits,
        "write_s": round(write_s, 3),
        "tag_ms": round(median(tag_ms), 3),
        "small_commit_ms": round(median(small_commit_ms), 3),
        "diff_ms": round(median(diff_ms), 3),
        "diff_keys": changed,
        "open_version_ms": round(median(open_ms), 3),
        "read_version_chunks_per_s": round(keys as f64 / median(version_s), 0),
        "read_head_chunks_per_s": round(keys as f64 / median(head_s), 0),
    }))
}

/// A database of `target`'s backend and durability, without history, at `path` (made afresh).
fn small_commits_beside(target: &Target, path: &std::path::Path) -> Result<zarrdb::Database, zarrdb::Error> {
    super::target::remove_path(path);
    target.builder().history(false).create(path)
}
