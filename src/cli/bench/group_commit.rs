//! `group_commit`: T threads each write whole single chunks of their own array through the
//! auto-commit store, so every write is one commit (durable by default), for a fixed time. Without
//! group commit a durable engine cannot commit faster than the disk syncs; the figure is the
//! ratio of commits/s to the fsync rate measured in the same run (before every run and after the
//! last, as in `append_rows`). Every chunk's last value is checked afterwards.
//!
//! `group_commit_new` is the same with every write to a chunk never written before, so the
//! database grows by a chunk per commit whether or not it keeps history: beside
//! `group_commit` (which rewrites 16 chunks, whose old values a database with history keeps),
//! it tells what history's bookkeeping costs from what keeping every version costs.

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
/// Chunks per array of `group_commit_new`: more than a writer makes in `DURATION`.
const NEW_CHUNKS: u64 = 1 << 24;

/// Which chunks the writers write.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chunks {
    /// The same [`CHUNKS`] in turn (`group_commit`).
    Rewrite,
    /// A new one every time (`group_commit_new`).
    New,
}

impl Chunks {
    fn workload(self) -> &'static str {
        match self {
            Chunks::Rewrite => "group_commit",
            Chunks::New => "group_commit_new",
        }
    }

    fn per_array(self) -> u64 {
        match self {
            Chunks::Rewrite => CHUNKS,
            Chunks::New => NEW_CHUNKS,
        }
    }
}

pub(crate) fn run(target: &Target, runs: usize, chunks: Chunks) -> Result<Vec<Value>, CliError> {
    let mut figures = Vec::new();
    for threads in THREADS {
        let (mut commits, mut fsyncs) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            fsyncs.push(fsync_rate(target.folder())?);
            commits.push(once(target, threads, chunks)?);
            target.remove();
        }
        fsyncs.push(fsync_rate(target.folder())?);
        let (commits, fsyncs) = (median(commits), median(fsyncs));
        figures.push(json!({
            "workload": chunks.workload(),
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

/// Commits per second of `threads` writers; fails if a chunk does not hold its last value (of
/// `group_commit_new`'s, the last [`CHUNKS`] each writer wrote are read back).
fn once(target: &Target, threads: u64, chunks: Chunks) -> Result<f64, CliError> {
    let store = target.create()?;
    let meta = ArrayMetadata::new(DataType::UInt32, vec![CHUNK, CHUNK * chunks.per_array()], vec![CHUNK, CHUNK]);
    let arrays = (0..threads)
        .map(|t| Array::create(store.clone(), &format!("/w{t}"), meta.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let start = Instant::now();
    let results: Vec<Result<Written, zarrdb::Error>> = std::thread::scope(|s| {
        let workers: Vec<_> = arrays.iter().map(|array| s.spawn(move || writer(array, start, chunks))).collect();
        workers.into_iter().map(|w| w.join().expect("a writer thread panicked")).collect()
    });
    let secs = start.elapsed().as_secs_f64();
    let mut commits = 0;
    for (array, result) in arrays.iter().zip(results) {
        let written = result?;
        commits += written.writes;
        let width = written.last.len() as u64 * CHUNK;
        let found = array.read_region::<u32>(&[0, written.first * CHUNK], &[CHUNK, width])?;
        for (c, value) in written.last.iter().enumerate() {
            let chunk = (0..CHUNK).flat_map(|r| {
                let row = (r * width + c as u64 * CHUNK) as usize;
                found[row..row + CHUNK as usize].iter().copied()
            });
            if chunk.into_iter().any(|v| v != *value) {
                let c = written.first + c as u64;
                return Err(CliError::new(format!("group_commit: chunk {c} of {} lost its last write", array.path())));
            }
        }
    }
    Ok(commits as f64 / secs)
}

/// What a writer did: its number of writes, and the last value of the chunks from `first` on
/// (0, the fill value, where none).
struct Written {
    writes: u64,
    first: u64,
    last: Vec<u32>,
}

/// Write whole chunks until `DURATION` after `start`: the 16 in turn, or a new one each time.
fn writer(array: &Array, start: Instant, chunks: Chunks) -> Result<Written, zarrdb::Error> {
    let mut last = vec![0u32; CHUNKS as usize];
    let mut writes = 0u64;
    // `group_commit_new`'s arrays hold more chunks than a writer reaches in `DURATION`.
    while start.elapsed() < DURATION {
        let c = writes % chunks.per_array();
        writes += 1;
        let value = writes as u32;
        array.write_region(&[0, c * CHUNK], &[CHUNK, CHUNK], &vec![value; (CHUNK * CHUNK) as usize])?;
        last[(c % CHUNKS) as usize] = value;
    }
    let first = match chunks {
        Chunks::Rewrite => 0,
        // The last 16 chunks written, in order.
        Chunks::New => {
            let first = writes.saturating_sub(CHUNKS);
            last.rotate_left((first % CHUNKS) as usize);
            last.truncate((writes - first) as usize);
            first
        }
    };
    Ok(Written { writes, first, last })
}
