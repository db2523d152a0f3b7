//! `history_gc`: what a collection costs after an expiry, against what it frees and against the
//! size of the database (any backend; history is implied). Three cases, each a fresh database
//! with one array of 64-byte chunks, `ZARRDB_BENCH_GC_KEYS` of them (default 100,000), written in
//! one commit (expired and collected at once: the first collection, timed apart, folds that
//! commit's changes into the oldest version kept), then commits that each rewrite a run of
//! `churn` chunks, then one more commit, `expire(main)` and a timed `collect()`:
//! - `many`: 100 commits of 10 % churn (the garbage is 100 × 10 % of the chunks);
//! - `few`: 10 commits of 10 % churn (a tenth of that garbage);
//! - `few_of_big`: the same 10 commits of the same number of chunks, in a database ten times
//!   larger (the same garbage, ten times the total).
//!
//! Collection costs what it frees when `many` takes about ten times `few`, and `few_of_big` about
//! what `few` does.

use std::time::Instant;

use serde_json::{json, Value};
use zarrdb::db::VersionRef;
use zarrdb::{Array, ArrayMetadata, DataType};

use super::target::Target;
use crate::cli::CliError;

/// Elements per chunk: 64-byte values, under the inline limit (each overwrite copies the
/// superseded value aside, which collection deletes).
const CHUNK: u64 = 16;

struct Case {
    name: &'static str,
    chunks: u64,
    churn: u64,
    commits: u64,
}

fn one(target: &Target, case: &Case) -> Result<Value, CliError> {
    target.remove();
    if let Some(parent) = target.path().parent() {
        std::fs::create_dir_all(parent)?;
    }
    let db = target.builder().history(true).create(target.path())?;
    let len = case.chunks * CHUNK;
    let array = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::Int32, vec![len], vec![CHUNK]))?;
    array.write_region(&[0], &[len], &vec![1i32; len as usize])?;
    // The first collection folds the commit that wrote every chunk into the oldest version kept
    // (a cost that follows that commit's changes, paid once); timed apart.
    let main = VersionRef::Branch("main".into());
    db.expire(&main)?;
    let start = Instant::now();
    db.collect()?;
    let first_s = start.elapsed().as_secs_f64();
    let run = case.churn * CHUNK;
    let values = vec![2i32; run as usize];
    for c in 0..=case.commits {
        // Runs of chunks one after the other, round the array.
        let at = (c * case.churn) % case.chunks * CHUNK;
        let txn = db.begin_write()?;
        Array::open(txn.store(), "/a")?.write_region(&[at.min(len - run)], &[run], &values)?;
        txn.commit()?;
    }
    db.expire(&main)?;
    let start = Instant::now();
    let freed = db.collect()?;
    let seconds = start.elapsed().as_secs_f64();
    if !db.check_history()?.is_empty() {
        return Err(CliError::new("history_gc: check_history found damage after the collection"));
    }
    let round = |v: f64, places: i32| (v * 10f64.powi(places)).round() / 10f64.powi(places);
    Ok(json!({
        "workload": "history_gc",
        "backend": target.name,
        "case": case.name,
        "chunk_keys": case.chunks,
        "expired_versions": freed.versions,
        "freed_values": freed.values,
        "freed_bytes": freed.bytes,
        "first_collect_s": round(first_s, 3),
        "collect_s": round(seconds, 3),
        "us_per_freed_value": round(seconds * 1e6 / freed.values.max(1) as f64, 2),
    }))
}

pub(crate) fn run(target: &Target) -> Result<Vec<Value>, CliError> {
    let Some(_) = target.backend() else {
        return Err(CliError::new(format!(
            "history_gc: {} keeps no history (a database backend is needed)",
            target.name
        )));
    };
    let keys = std::env::var("ZARRDB_BENCH_GC_KEYS").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000u64).max(10);
    let churn = keys / 10;
    let cases = [
        Case { name: "many", chunks: keys, churn, commits: 100 },
        Case { name: "few", chunks: keys, churn, commits: 10 },
        Case { name: "few_of_big", chunks: keys * 10, churn, commits: 10 },
    ];
    let mut figures = Vec::new();
    for case in &cases {
        figures.push(one(target, case)?);
        target.remove();
    }
    Ok(figures)
}
