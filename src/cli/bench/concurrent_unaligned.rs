//! `concurrent_unaligned`: T threads write random 100 x 100 regions into one 4096 x 4096 f32
//! array in chunks of 256 x 256, for a fixed time. The regions are the tiles of a 100 x 100 grid,
//! owned in turn by the threads (tile k belongs to thread k % T), so they are unaligned with the
//! chunks and every chunk holds tiles of several threads: each write is a read-modify-write of up
//! to four shared chunks. Chunks are compressed with zstd (level 1), as the performance issue
//! asks: decoding and encoding them is the work that runs outside the engine's serial commit, so
//! it is what more writers can share. Afterwards every tile must hold the last value its owner
//! wrote; an element that does not is a lost update.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zarrdb::metadata::Codec;
use zarrdb::{Array, ArrayMetadata, DataType};

use super::median;
use super::target::Target;
use crate::cli::CliError;

const SIDE: u64 = 4096;
const CHUNK: u64 = 256;
const TILE: u64 = 100;
const TILES: u64 = SIDE / TILE;
const THREADS: [u64; 3] = [1, 2, 8];
const DURATION: Duration = Duration::from_secs(2);

/// The figures for 1, 2 and 8 threads on `target`: writes/s (median of `runs`) and the lost
/// updates of all runs together.
pub(crate) fn run(target: &Target, runs: usize) -> Result<Vec<Value>, CliError> {
    let mut figures = Vec::new();
    for threads in THREADS {
        let (mut rates, mut lost) = (Vec::new(), 0);
        for _ in 0..runs {
            let (rate, run_lost) = once(target, threads)?;
            rates.push(rate);
            lost += run_lost;
            target.remove();
        }
        figures.push(json!({
            "workload": "concurrent_unaligned",
            "backend": target.name,
            "durability": target.durability_label(),
            "threads": threads,
            "writes_per_s": median(rates).round() as u64,
            "lost_updates": lost,
            "runs": runs,
        }));
    }
    Ok(figures)
}

/// One measurement: writes per second of `threads` threads, and the elements that lost an update.
fn once(target: &Target, threads: u64) -> Result<(f64, u64), CliError> {
    let store = target.create()?;
    let meta = ArrayMetadata::new(DataType::Float32, vec![SIDE, SIDE], vec![CHUNK, CHUNK])
        .with_codecs([Codec::bytes(), Codec::zstd(1)]);
    let array = Array::create(store.clone(), "/shared", meta)?;
    let start = Instant::now();
    let results: Vec<Result<(u64, Vec<f32>), zarrdb::Error>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let array = &array;
                s.spawn(move || writer(array, t, threads, start))
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a writer thread panicked")).collect()
    });
    let secs = start.elapsed().as_secs_f64();
    let mut last = vec![0f32; (TILES * TILES) as usize];
    let mut writes = 0;
    for result in results {
        let (count, values) = result?;
        writes += count;
        for (tile, value) in values.into_iter().enumerate() {
            if value != 0.0 {
                last[tile] = value;
            }
        }
    }
    // Read back from the store opened afresh: what a crash-free close and reopen keeps.
    drop((array, store));
    let reopened = Array::open(target.reopen()?, "/shared")?;
    let found = reopened.read_all::<f32>()?;
    let mut lost = 0;
    for (i, value) in found.iter().enumerate() {
        let (row, col) = (i as u64 / SIDE, i as u64 % SIDE);
        let expected = if row < TILES * TILE && col < TILES * TILE {
            last[(row / TILE * TILES + col / TILE) as usize]
        } else {
            0.0
        };
        if *value != expected {
            lost += 1;
        }
    }
    Ok((writes as f64 / secs, lost))
}

/// Thread `t` of `threads` writes its tiles until `DURATION` after `start`; returns its number of
/// writes and the last value it wrote to each tile (0 where none, and for others' tiles).
fn writer(array: &Array, t: u64, threads: u64, start: Instant) -> Result<(u64, Vec<f32>), zarrdb::Error> {
    let mine: Vec<u64> = (0..TILES * TILES).filter(|k| k % threads == t).collect();
    let mut last = vec![0f32; (TILES * TILES) as usize];
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ t;
    let mut step = 0u64;
    while start.elapsed() < DURATION {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let tile = mine[(state >> 33) as usize % mine.len()];
        step += 1;
        // Exact in f32 (below 2^24), distinct per write, never the fill value 0.
        let value = (t * 100_000 + step % 100_000) as f32 + 1.0;
        let (row, col) = (tile / TILES * TILE, tile % TILES * TILE);
        array.write_region(&[row, col], &[TILE, TILE], &vec![value; (TILE * TILE) as usize])?;
        last[tile as usize] = value;
    }
    Ok((step, last))
}
