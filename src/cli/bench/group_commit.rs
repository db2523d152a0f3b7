//! `group_commit`: T threads each write whole single chunks of their own array through the
//! auto-commit store, so every write is one commit (durable by default), for a fixed time. Without
//! group commit a durable engine cannot commit faster than the disk syncs; the figure is the
//! ratio of commits/s to the fsync rate measured in the same run (before every run and after the
//! last, as in `append_rows`). Every chunk's last value is checked afterwards.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zarrdb::{Array, ArrayMetadata, DataType};

use super::append_rows::fsync_rate;
use super::median;
use super::target::Target;
use crate::cli::CliError;

const THREADS: [u64; 2] = [1, 8];
/// Chunks per array: 64 x 64 u32, 16 KiB each.
const CHUNKS: u64 = 16;
const CHUNK: u64 = 64;
const DURATION: Duration = Duration::from_secs(2);

pub(crate) fn run(target: &Target, runs: usize) -> Result<Vec<Value>, CliError> {
    let mut figures = Vec::new();
    for threads in THREADS {
        let (mut commits, mut fsyncs) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            fsyncs.push(fsync_rate(target.folder())?);
            commits.push(once(target, threads)?);
            target.remove();
        }
        fsyncs.push(fsync_rate(target.folder())?);
        let (commits, fsyncs) = (median(commits), median(fsyncs));
        figures.push(json!({
            "workload": "group_commit",
            "backend": target.name,
            "durability": target.durability_label(),
            "threads": threads,
            "commits_per_s": commits.round() as u64,
            "fsync_per_s": fsyncs.round() as u64,
            "ratio_to_fsync": (commits / fsyncs * 100.0).round() / 100.0,
            "runs": runs,
        }));
    }
    Ok(figures)
}

/// Commits per second of `threads` writers; fails if a chunk does not hold its last value.
fn once(target: &Target, threads: u64) -> Result<f64, CliError> {
    let store = target.create()?;
    let meta = ArrayMetadata::new(DataType::UInt32, vec![CHUNK, CHUNK * CHUNKS], vec![CHUNK, CHUNK]);
    let arrays = (0..threads)
        .map(|t| Array::create(store.clone(), &format!("/w{t}"), meta.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let start = Instant::now();
    let results: Vec<Result<(u64, Vec<u32>), zarrdb::Error>> = std::thread::scope(|s| {
        let workers: Vec<_> = arrays.iter().map(|array| s.spawn(move || writer(array, start))).collect();
        workers.into_iter().map(|w| w.join().expect("a writer thread panicked")).collect()
    });
    let secs = start.elapsed().as_secs_f64();
    let mut commits = 0;
    for (array, result) in arrays.iter().zip(results) {
        let (count, last) = result?;
        commits += count;
        let found = array.read_all::<u32>()?;
        for (c, value) in last.iter().enumerate() {
            let chunk = (0..CHUNK).flat_map(|r| {
                let row = (r * CHUNK * CHUNKS + c as u64 * CHUNK) as usize;
                found[row..row + CHUNK as usize].iter().copied()
            });
            if chunk.into_iter().any(|v| v != *value) {
                return Err(CliError::new(format!("group_commit: chunk {c} of {} lost its last write", array.path())));
            }
        }
    }
    Ok(commits as f64 / secs)
}

/// Write whole chunks in turn until `DURATION` after `start`: the number of writes and the last
/// value of each chunk (0, the fill value, where none).
fn writer(array: &Array, start: Instant) -> Result<(u64, Vec<u32>), zarrdb::Error> {
    let mut last = vec![0u32; CHUNKS as usize];
    let mut writes = 0u64;
    while start.elapsed() < DURATION {
        let c = writes % CHUNKS;
        writes += 1;
        let value = writes as u32;
        array.write_region(&[0, c * CHUNK], &[CHUNK, CHUNK], &vec![value; (CHUNK * CHUNK) as usize])?;
        last[c as usize] = value;
    }
    Ok((writes, last))
}
