//! The whole-array workloads of ../shared/BENCHMARKS.md (definitions as in
//! ../shared/bench/workloads.json): create, write the whole array in one call, open afresh, read it
//! whole in one call; MB/s of uncompressed bytes.

use std::time::Instant;

use serde_json::{json, Value};
use zarrdb::metadata::{Codec, ShardingConfig};
use zarrdb::{Array, ArrayMetadata, DataType};

use super::data::bench_bytes;
use super::median;
use super::target::Target;
use crate::cli::CliError;

pub(crate) const NAMES: [&str; 4] = ["big_zstd", "big_raw", "small_chunks", "sharded"];

/// Shape, chunk shape and codec chain of a workload.
pub(crate) fn definition(name: &str) -> Option<(Vec<u64>, Vec<u64>, Vec<Codec>)> {
    let zstd1 = || vec![Codec::bytes(), Codec::zstd(1)];
    Some(match name {
        "big_zstd" => (vec![8192, 8192], vec![512, 512], zstd1()),
        "big_raw" => (vec![8192, 8192], vec![512, 512], vec![Codec::bytes()]),
        "small_chunks" => (vec![4096, 4096], vec![32, 32], zstd1()),
        "sharded" => {
            let shards = ShardingConfig::new(vec![128, 128]).with_codecs(zstd1());
            (vec![8192, 8192], vec![2048, 2048], vec![Codec::Sharding(shards)])
        }
        _ => return None,
    })
}

pub(crate) fn metadata(name: &str) -> Option<ArrayMetadata> {
    let (shape, chunks, codecs) = definition(name)?;
    Some(ArrayMetadata::new(DataType::Float32, shape, chunks).with_codecs(codecs))
}

/// One measured run.
pub(crate) struct Run {
    pub write_s: f64,
    pub read_s: f64,
    pub stored_bytes: u64,
    /// What the store occupies on disk after the write and the read: apparent, allocated.
    pub disk_bytes: (u64, u64),
}

/// Write and read the workload once on a fresh store of `target`, reopened between the two; the
/// read is checked against the data.
pub(crate) fn run_once(name: &str, target: &Target, data: &[u8]) -> Result<Run, CliError> {
    let meta = metadata(name).ok_or_else(|| CliError::new(format!("unknown workload \"{name}\"")))?;
    let shape = meta.shape.clone();
    let zeros = vec![0; shape.len()];
    let store = target.create()?;
    let array = Array::create(store.clone(), "/bench", meta)?;
    let start = Instant::now();
    array.write_region_bytes(&zeros, &shape, data)?;
    // Closing is part of writing: a fast-mode redb database flushes its deferred commits then.
    drop((array, store));
    let write_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let store = target.reopen()?;
    let array = Array::open(store.clone(), "/bench")?;
    let back = array.read_region_bytes(&zeros, &shape)?;
    let read_s = start.elapsed().as_secs_f64();
    if back != data {
        return Err(CliError::new(format!("workload {name}: the data read back differs from the data written")));
    }
    let stored_bytes = array.stored_chunks()?.iter().map(|(_, size)| size).sum();
    drop((array, store));
    Ok(Run { write_s, read_s, stored_bytes, disk_bytes: target.disk_bytes() })
}

/// Medians of `runs` runs of a whole-array workload on each target, the targets alternated
/// within each run (BENCHMARKS.md: compare as ratios measured in the same run, A and B
/// alternated), so a noisy neighbour slows every backend alike.
pub(crate) fn alternated(workload: &str, targets: &[Target], runs: usize) -> Result<Vec<Value>, CliError> {
    let data = data(workload);
    let mb = data.len() as f64 / 1e6;
    let mut writes = vec![Vec::new(); targets.len()];
    let mut reads = vec![Vec::new(); targets.len()];
    let mut stored = vec![0; targets.len()];
    let mut disk = vec![(0, 0); targets.len()];
    for _ in 0..runs {
        for (i, target) in targets.iter().enumerate() {
            let run = run_once(workload, target, &data)?;
            target.remove();
            writes[i].push(mb / run.write_s);
            reads[i].push(mb / run.read_s);
            stored[i] = run.stored_bytes;
            disk[i] = run.disk_bytes;
        }
    }
    let round = |x: f64| (x * 10.0).round() / 10.0;
    Ok(targets
        .iter()
        .enumerate()
        .map(|(i, target)| {
            json!({
                "workload": workload,
                "backend": target.name,
                "durability": target.durability_label(),
                "write_MBps": round(median(std::mem::take(&mut writes[i]))),
                "read_MBps": round(median(std::mem::take(&mut reads[i]))),
                "runs": runs,
                "uncompressed_MB": round(mb),
                "stored_MB": round(stored[i] as f64 / 1e6),
                "file_MB": round(disk[i].0 as f64 / 1e6),
                "allocated_MB": round(disk[i].1 as f64 / 1e6),
                "file_per_stored": (disk[i].0 as f64 / stored[i].max(1) as f64 * 100.0).round() / 100.0,
            })
        })
        .collect())
}

/// The benchmark data of a workload.
pub(crate) fn data(name: &str) -> Vec<u8> {
    let (shape, _, _) = definition(name).expect("known workload");
    bench_bytes(shape.iter().product())
}
