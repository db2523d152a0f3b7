//! `append_rows`: arrays [0, 1024] f32 in chunks [64, 1024] grow by one row per transaction
//! (`Array::append` on the auto-commit store, so each append is one commit, durable by default):
//! one thread appending to one array, then 8 threads each appending to its own array.
//!
//! A durable commit costs at least one fsync, so the figure that matters is the ratio of
//! appends/s to the fsync rate of the same file system, measured by the bench itself between the
//! append runs (A and B alternated): a 4 KiB `pwrite` + `fdatasync` loop on a file next to the
//! database. BENCHMARKS.md's target is 2x the fsync rate with 8 threads, which takes group commit.

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zarrdb::{Array, ArrayMetadata, DataType};

use super::target::Target;
use super::{data, median};
use crate::cli::CliError;

/// Appends per measurement, shared by the threads (BENCHMARKS.md says 10,000; at fsync speed that
/// is several seconds per measurement, see docs/cli.md).
pub(crate) const APPENDS: u64 = 2_000;
const WIDTH: u64 = 1024;
const CHUNK_ROWS: u64 = 64;
const THREADS: [u64; 2] = [1, 8];
const FSYNC_PROBE: Duration = Duration::from_secs(1);

/// The figures for 1 and 8 threads on `target`: medians of `runs` append runs and of the fsync
/// probes around them.
pub(crate) fn run(target: &Target, runs: usize) -> Result<Vec<Value>, CliError> {
    let mut figures = Vec::new();
    for threads in THREADS {
        let (mut appends, mut fsyncs) = (Vec::new(), Vec::new());
        // The fsync rate before every run and after the last: A and B alternated.
        for _ in 0..runs {
            fsyncs.push(fsync_rate(target.folder())?);
            appends.push(appends_once(target, threads, APPENDS)?);
        }
        fsyncs.push(fsync_rate(target.folder())?);
        let (appends, fsyncs) = (median(appends), median(fsyncs));
        figures.push(json!({
            "workload": "append_rows",
            "backend": target.name,
            "durability": target.durability_label(),
            "threads": threads,
            "appends": APPENDS / threads * threads,
            "appends_per_s": appends.round() as u64,
            "fsync_per_s": fsyncs.round() as u64,
            "ratio_to_fsync": (appends / fsyncs * 100.0).round() / 100.0,
            "runs": runs,
        }));
    }
    Ok(figures)
}

/// Appends per second of `threads` threads, each appending `appends / threads` rows to its own
/// array of a fresh store; the arrays are checked afterwards.
fn appends_once(target: &Target, threads: u64, appends: u64) -> Result<f64, CliError> {
    let store = target.create()?;
    let rows = appends / threads;
    let data = data::bench_bytes(rows * WIDTH);
    let meta = ArrayMetadata::new(DataType::Float32, vec![0, WIDTH], vec![CHUNK_ROWS, WIDTH]);
    let arrays = (0..threads)
        .map(|t| Array::create(store.clone(), &format!("/rows{t}"), meta.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let start = Instant::now();
    let appended: Vec<Result<Array, zarrdb::Error>> = std::thread::scope(|s| {
        let workers: Vec<_> = arrays
            .into_iter()
            .map(|mut array| {
                let data = &data;
                s.spawn(move || {
                    for row in data.chunks_exact(WIDTH as usize * 4) {
                        array.append_bytes(0, &[1, WIDTH], row)?;
                    }
                    Ok(array)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("an append thread panicked")).collect()
    });
    let secs = start.elapsed().as_secs_f64();
    for array in appended {
        let array = Array::open(store.clone(), array?.path().as_str())?;
        if array.shape() != [rows, WIDTH] || array.read_region_bytes(&[0, 0], &[rows, WIDTH])? != data {
            return Err(CliError::new(format!("append_rows: {} does not hold the rows appended", array.path())));
        }
    }
    Ok((rows * threads) as f64 / secs)
}

/// 4 KiB writes + `fdatasync` per second on a file in `folder`, for about a second.
pub(super) fn fsync_rate(folder: &Path) -> Result<f64, CliError> {
    std::fs::create_dir_all(folder)?;
    let path = folder.join("fsync-probe");
    let file = OpenOptions::new().create(true).write(true).truncate(true).open(&path)?;
    let block = [0x5a_u8; 4096];
    let start = Instant::now();
    let mut count = 0u64;
    while count == 0 || start.elapsed() < FSYNC_PROBE {
        file.write_all_at(&block, 0)?;
        file.sync_data()?;
        count += 1;
    }
    let rate = count as f64 / start.elapsed().as_secs_f64();
    drop(file);
    std::fs::remove_file(&path)?;
    Ok(rate)
}

#[cfg(test)]
mod tests {
    use zarrdb::Durability;

    use super::*;

    /// 8 threads append 10 rows each to their own arrays, which then hold exactly those rows.
    #[test]
    fn eight_threads_append_their_rows() {
        let dir = tempfile::tempdir().unwrap();
        for backend in ["memory", "redb", "lmdb"] {
            let rate = Target::new(backend, dir.path(), Durability::Fast)
                .and_then(|target| appends_once(&target, 8, 80).map(|rate| (target, rate)));
            let (target, rate) = rate.unwrap_or_else(|e| panic!("{backend}: {}", e.message_for_tests()));
            assert!(rate > 0.0, "{backend}");
            target.remove();
        }
    }
}
