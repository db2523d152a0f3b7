//! `band_writes`: the `big_zstd` array written as 8 bands of 1,024 rows (32 MiB each), one region
//! write per band, as a pipeline appends time slices. Each band is large enough to stream into a
//! commit of its own (`array/stream.rs`), so the figure shows what the database's durability
//! mode costs per large commit: the time until the last band's write returns, and the time of
//! closing the database after it (where a fast-mode redb database makes its commits durable).
//! MB/s of uncompressed bytes.

use std::time::Instant;

use serde_json::{json, Value};
use zarrdb::Array;

use super::target::Target;
use super::{data, median, whole_array};
use crate::cli::CliError;

const BANDS: u64 = 8;

/// The figures of `runs` runs on `target`: medians of the writes, and of writes plus close.
pub(crate) fn run(target: &Target, runs: usize) -> Result<Vec<Value>, CliError> {
    let meta = whole_array::metadata("big_zstd").expect("big_zstd is defined");
    let shape = meta.shape.clone();
    let data = data::bench_bytes(shape.iter().product());
    let rows = shape[0] / BANDS;
    let band_bytes = (rows * shape[1] * 4) as usize;
    let (mut writes, mut totals) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let store = target.create()?;
        let array = Array::create(store.clone(), "/bench", meta.clone())?;
        let start = Instant::now();
        for (band, bytes) in data.chunks(band_bytes).enumerate() {
            array.write_region_bytes(&[band as u64 * rows, 0], &[rows, shape[1]], bytes)?;
        }
        let written = start.elapsed().as_secs_f64();
        drop((array, store));
        let total = start.elapsed().as_secs_f64();
        target.remove();
        let mb = data.len() as f64 / 1e6;
        writes.push(mb / written);
        totals.push(mb / total);
    }
    let round = |x: f64| (x * 10.0).round() / 10.0;
    Ok(vec![json!({
        "workload": "band_writes",
        "backend": target.name,
        "durability": target.durability_label(),
        "bands": BANDS,
        "write_MBps": round(median(writes)),
        "write_and_close_MBps": round(median(totals)),
        "runs": runs,
    })])
}
