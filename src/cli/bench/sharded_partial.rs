//! `sharded_partial`: read 1,000 random inner-chunk-sized regions of the `sharded` array and count
//! the bytes fetched from the store per region (target: at most one inner chunk plus the index).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};
use zarrdb::{Array, Store};

use super::counting::Counting;
use super::{data, whole_array};
use crate::cli::CliError;

const REGIONS: u64 = 1000;
const INNER: u64 = 128;

pub(crate) fn run(store: Arc<dyn Store>, backend: &str) -> Result<Value, CliError> {
    let meta = whole_array::metadata("sharded").expect("sharded is defined");
    let shape = meta.shape.clone();
    let array = Array::create(store.clone(), "/bench", meta)?;
    array.write_region_bytes(&[0, 0], &shape, &data::bench_bytes(shape.iter().product()))?;
    let counting = Arc::new(Counting::new(store));
    let array = Array::open(counting.clone(), "/bench")?;
    // A fixed LCG: the same regions on every run and machine.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |bound: u64| {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % bound
    };
    let regions: Vec<[u64; 2]> =
        (0..REGIONS).map(|_| [next(shape[0] / INNER) * INNER, next(shape[1] / INNER) * INNER]).collect();
    counting.fetched.store(0, Ordering::Relaxed);
    let start = Instant::now();
    for origin in &regions {
        let values = array.read_region_bytes(origin, &[INNER, INNER])?;
        if values.len() as u64 != INNER * INNER * 4 {
            return Err(CliError::new("sharded_partial: a region read returned the wrong size"));
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let fetched = counting.fetched.load(Ordering::Relaxed);
    Ok(json!({
        "workload": "sharded_partial",
        "backend": backend,
        "regions_per_s": (REGIONS as f64 / secs).round(),
        "bytes_fetched_per_region": fetched / REGIONS,
        "inner_chunk_bytes": INNER * INNER * 4,
        "index_bytes": 16 * (2048 / INNER) * (2048 / INNER) + 4,
    }))
}
