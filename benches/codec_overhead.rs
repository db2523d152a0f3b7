//! How much the codec pipeline adds over calling the codec library directly on the same bytes
//! (the codec issue's target: at most 10 %).
//!
//! For `big_zstd` (8192² f32, 512² chunks, zstd 1) and `sharded` (2048² shards of 128² zstd-1 inner
//! chunks, crc32c index) on the shared benchmark data:
//! - baseline: the chunks are split out beforehand, then compressed / decompressed with `zstd` on
//!   rayon's pool, one call per chunk, each thread reusing one zstd context (as the chain does;
//!   a new context per call costs a CPUID, which virtual machines trap). This is the baseline of
//!   the target.
//! - zstd, new context per call: the same with `zstd::bulk::compress` / `decompress`, the
//!   baseline of figures before 2026-11-21; shown for comparison.
//! - chain: `Array::encode_chunk` / `decode_chunk` on the same bytes as whole chunks (for
//!   `sharded`, whole shards: splitting into inner chunks, the index and its checksum included).
//!   This is the figure the target applies to.
//! - placed (`sharded` only): the baseline's decompression plus placing every inner chunk at its
//!   place in whole shards, built row by row in safe code: the least any decoder that returns
//!   whole shards must do. It tells the placement's cost apart from the chain's own.
//! - region: one `write_region_bytes` / `read_region_bytes` of the whole array through a store that
//!   keeps encoded values in a hash map, adding chunk assembly, store copies and the output buffer;
//!   reported for context (the whole-array targets are in `zarrdb bench`).
//!
//! Runs alternate baseline and zarrdb; medians of 15 are reported, by wall clock and, on a line of
//! their own, by the process's CPU time, which other processes' load on a shared host does not
//! inflate. `cargo bench --bench codec_overhead` measures; under `cargo test` it runs once on a
//! small array as a smoke test.

/// The allocator of the `zarrdb` binary, so figures match `zarrdb bench`; `main` also turns its
/// purging off (see `steady_allocator`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../src/cli/bench/data.rs"]
mod data;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use rayon::prelude::*;
use zarrdb::error::StoreError;
use zarrdb::metadata::{Codec, ShardingConfig};
use zarrdb::store::{DirListing, ListableStore, ReadableStore, StoreCapabilities, WritableStore};
use zarrdb::{Array, ArrayMetadata, DataType, Store};

/// Encoded values in a hash map: the cheapest store that still hands back owned values.
#[derive(Default)]
struct MapStore(RwLock<HashMap<String, Vec<u8>>>);

impl ReadableStore for MapStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.0.read().unwrap().get(key).cloned())
    }
}
impl WritableStore for MapStore {
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.0.write().unwrap().insert(key.to_owned(), value.to_vec());
        Ok(())
    }
    fn set_partial_values(&self, _: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        Err(StoreError::Unsupported { store: "bench-map", operation: "set_partial_values" })
    }
    fn erase(&self, key: &str) -> Result<(), StoreError> {
        self.0.write().unwrap().remove(key);
        Ok(())
    }
    fn erase_prefix(&self, prefix: &str) -> Result<(), StoreError> {
        self.0.write().unwrap().retain(|k, _| !k.starts_with(prefix));
        Ok(())
    }
}
impl ListableStore for MapStore {
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let mut keys: Vec<String> = self.0.read().unwrap().keys().filter(|k| k.starts_with(prefix)).cloned().collect();
        keys.sort();
        Ok(keys)
    }
    fn list_dir(&self, _: &str) -> Result<DirListing, StoreError> {
        Ok(DirListing::default())
    }
}
impl Store for MapStore {
    fn capabilities(&self) -> StoreCapabilities {
        MemoryLike::caps()
    }
    fn kind(&self) -> &'static str {
        "bench-map"
    }
}

struct MemoryLike;
impl MemoryLike {
    fn caps() -> StoreCapabilities {
        zarrdb::MemoryStore::new().capabilities()
    }
}

/// Split a C-order 2-d f32 array into C-order chunks (row-major chunk order).
fn split(data: &[u8], n: usize, c: usize) -> Vec<Vec<u8>> {
    let per = n / c;
    (0..per * per)
        .into_par_iter()
        .map(|k| {
            let (ci, cj) = (k / per, k % per);
            let mut chunk = Vec::with_capacity(c * c * 4);
            for row in ci * c..(ci + 1) * c {
                let start = (row * n + cj * c) * 4;
                chunk.extend_from_slice(&data[start..start + c * 4]);
            }
            chunk
        })
        .collect()
}

thread_local! {
    static COMPRESSOR: RefCell<zstd::bulk::Compressor<'static>> =
        RefCell::new(zstd::bulk::Compressor::new(1).expect("a zstd context"));
    static DECOMPRESSOR: RefCell<zstd::bulk::Decompressor<'static>> =
        RefCell::new(zstd::bulk::Decompressor::new().expect("a zstd context"));
}

fn compress(piece: &[u8]) -> Vec<u8> {
    COMPRESSOR.with(|c| c.borrow_mut().compress(piece).expect("compressible"))
}

fn decompress_into(frame: &[u8], out: &mut Vec<u8>, cap: usize) {
    out.clear();
    out.reserve(cap);
    DECOMPRESSOR.with(|d| d.borrow_mut().decompress_to_buffer(frame, out).expect("a valid frame"));
}

fn decompress(frame: &[u8], cap: usize) -> Vec<u8> {
    let mut out = Vec::new();
    decompress_into(frame, &mut out, cap);
    out
}

/// Decompress the inner chunks (`frames`, C order over the whole array, `c` wide in an `n`-wide
/// array) and place them into whole `shard`-wide shards (C order). Each row of inner chunks is
/// decompressed into reused buffers, then the shard is appended row by row, so nothing is
/// zero-filled or copied twice.
fn decompress_and_place(frames: &[Vec<u8>], n: usize, shard: usize, c: usize) -> Vec<Vec<u8>> {
    let (per_shard, per_row, shards) = (shard / c, n / c, n / shard);
    (0..shards * shards)
        .into_par_iter()
        .map(|s| {
            let (si, sj) = (s / shards, s % shards);
            let mut out = Vec::with_capacity(shard * shard * 4);
            let mut row = vec![Vec::new(); per_shard];
            for ci in si * per_shard..(si + 1) * per_shard {
                for (k, buf) in row.iter_mut().enumerate() {
                    decompress_into(&frames[ci * per_row + sj * per_shard + k], buf, c * c * 4);
                }
                for r in 0..c {
                    for buf in &row {
                        out.extend_from_slice(&buf[r * c * 4..(r + 1) * c * 4]);
                    }
                }
            }
            out
        })
        .collect()
}

struct Case {
    name: &'static str,
    n: usize,
    chunk: usize,
    /// Chunk size the baseline compresses (the inner chunk for sharding).
    codec_chunk: usize,
    codecs: Vec<Codec>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// MB per median second, by wall clock or by CPU time.
fn rate(mb: f64, samples: &[Sample], pick: fn(&Sample) -> f64) -> f64 {
    mb / median(samples.iter().map(pick).collect())
}

/// CPU time of all the process's threads so far, in seconds (0 where /proc is missing). Unlike
/// wall time it does not grow while other processes hold the cores, so on a shared host it
/// separates the chain's cost from the neighbours' load.
fn cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0.0 };
    let ns: u64 = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    ns as f64 / 1e9
}

fn measure(case: &Case, runs: usize, report: bool) {
    let data = data::bench_bytes((case.n * case.n) as u64);
    let mb = data.len() as f64 / 1e6;
    let pieces = split(&data, case.n, case.codec_chunk);
    let chunks = split(&data, case.n, case.chunk);
    let cap = case.codec_chunk * case.codec_chunk * 4;
    let store: Arc<dyn Store> = Arc::new(MapStore::default());
    let meta = ArrayMetadata::new(DataType::Float32, vec![case.n as u64; 2], vec![case.chunk as u64; 2])
        .with_codecs(case.codecs.clone());
    let array = Array::create(store.clone(), "/a", meta).unwrap();
    let shape = [case.n as u64; 2];
    let sharded = case.codec_chunk != case.chunk;
    let mut t = Timings::default();
    for _ in 0..runs {
        // The codec library alone, on the chunks it compresses.
        let compressed: Vec<Vec<u8>> = time(&mut t.zstd_encode, || pieces.par_iter().map(|p| compress(p)).collect());
        let back: Vec<Vec<u8>> =
            time(&mut t.zstd_decode, || compressed.par_iter().map(|c| decompress(c, cap)).collect());
        assert!(back == pieces, "{}: zstd does not round-trip", case.name);
        drop(back);
        let per_call: Vec<Vec<u8>> =
            time(&mut t.per_call_encode, || pieces.par_iter().map(|p| zstd::bulk::compress(p, 1).unwrap()).collect());
        let back: Vec<Vec<u8>> = time(&mut t.per_call_decode, || {
            per_call.par_iter().map(|c| zstd::bulk::decompress(c, cap).unwrap()).collect()
        });
        assert_eq!(back.len(), pieces.len());
        drop(back);
        if sharded {
            let placed =
                time(&mut t.placed_decode, || decompress_and_place(&compressed, case.n, case.chunk, case.codec_chunk));
            assert!(placed == chunks, "{}: placing inner chunks does not rebuild the shards", case.name);
        }
        // The codec chain, on the same bytes as whole chunks (shards).
        let encoded: Vec<Vec<u8>> =
            time(&mut t.chain_encode, || chunks.par_iter().map(|c| array.encode_chunk(c).unwrap()).collect());
        // Borrowed, as the baseline's frames are: neither frees its input while timed.
        let decoded: Vec<Vec<u8>> =
            time(&mut t.chain_decode, || encoded.par_iter().map(|e| array.decode_chunk(&e[..]).unwrap()).collect());
        drop(encoded);
        assert!(decoded == chunks, "{}: the chain does not round-trip", case.name);
        drop(decoded);
        // The whole-array region path (chunking, chain, store, output assembly).
        time(&mut t.region_write, || array.write_region_bytes(&[0, 0], &shape, &data).unwrap());
        let read = time(&mut t.region_read, || array.read_region_bytes(&[0, 0], &shape).unwrap());
        assert!(read == data, "{}: zarrdb read back different data", case.name);
    }
    if report {
        t.report(case.name, mb, sharded);
    }
}

/// One run of one step: wall-clock and CPU seconds.
struct Sample {
    wall: f64,
    cpu: f64,
}

/// The samples of each measured step.
#[derive(Default)]
struct Timings {
    zstd_encode: Vec<Sample>,
    zstd_decode: Vec<Sample>,
    per_call_encode: Vec<Sample>,
    per_call_decode: Vec<Sample>,
    placed_decode: Vec<Sample>,
    chain_encode: Vec<Sample>,
    chain_decode: Vec<Sample>,
    region_write: Vec<Sample>,
    region_read: Vec<Sample>,
}

fn time<R>(into: &mut Vec<Sample>, f: impl FnOnce() -> R) -> R {
    let (start, cpu) = (Instant::now(), cpu_seconds());
    let result = f();
    into.push(Sample { wall: start.elapsed().as_secs_f64(), cpu: cpu_seconds() - cpu });
    result
}

impl Timings {
    fn report(&self, name: &str, mb: f64, sharded: bool) {
        let r = |samples: &[Sample]| rate(mb, samples, |s| s.wall);
        let pct = |direct: f64, ours: f64| (direct / ours - 1.0) * 100.0;
        let (ze, zd) = (r(&self.zstd_encode), r(&self.zstd_decode));
        let (ce, cd) = (r(&self.chain_encode), r(&self.chain_decode));
        let (we, rd) = (r(&self.region_write), r(&self.region_read));
        println!(
            "{name:<9} chain   encode {ce:>7.1} MB/s vs zstd {ze:>7.1} MB/s ({:>+5.1} %) | decode {cd:>7.1} MB/s vs zstd {zd:>7.1} MB/s ({:>+5.1} %)",
            pct(ze, ce), pct(zd, cd)
        );
        println!(
            "{name:<9} region  write  {we:>7.1} MB/s vs zstd {ze:>7.1} MB/s ({:>+5.1} %) | read   {rd:>7.1} MB/s vs zstd {zd:>7.1} MB/s ({:>+5.1} %)",
            pct(ze, we), pct(zd, rd)
        );
        let (pe, pd) = (r(&self.per_call_encode), r(&self.per_call_decode));
        println!(
            "{name:<9} zstd with a new context per call: encode {pe:>7.1} MB/s (chain {:>+5.1} %) | decode {pd:>7.1} MB/s (chain {:>+5.1} %)",
            pct(pe, ce), pct(pd, cd)
        );
        let c = |samples: &[Sample]| rate(mb, samples, |s| s.cpu);
        let placed = if sharded {
            format!(" | decode vs zstd + placing {:>+5.1} %", pct(c(&self.placed_decode), c(&self.chain_decode)))
        } else {
            String::new()
        };
        println!(
            "{name:<9} cpu     encode vs zstd {:>+5.1} % | decode vs zstd {:>+5.1} %{placed} (chain over baseline in CPU time)",
            pct(c(&self.zstd_encode), c(&self.chain_encode)),
            pct(c(&self.zstd_decode), c(&self.chain_decode)),
        );
        if sharded {
            let pl = r(&self.placed_decode);
            println!(
                "{name:<9} zstd + placing inner chunks into shards: decode {pl:>7.1} MB/s (chain {:>+5.1} %, placing alone {:>+5.1} % over zstd)",
                pct(pl, cd), pct(zd, pl)
            );
        }
    }
}

/// Steps that return big buffers are dominated by page faults whenever their buffers are fresh
/// pages from the kernel (on this virtual machine, faulting in 256 MiB costs about as much as
/// decompressing it). Whether a step gets fresh pages or memory freed by the step before depends
/// on when the allocator last gave memory back: with mimalloc's default purging, the same
/// unchanged decode measured +3 % in one run and +98 % in the next. With purging off, freed memory
/// is reused as in a warmed-up long-running process, and both sides are measured on the same
/// terms. mimalloc reads the setting from the environment at start-up, so the benchmark runs
/// itself again with it set. Returns the child's exit code, or `None` in the child.
fn steady_allocator() -> Option<i32> {
    const PURGE: &str = "MIMALLOC_PURGE_DELAY";
    if std::env::var_os(PURGE).is_some() {
        return None;
    }
    let exe = std::env::current_exe().expect("the benchmark's own path");
    let status = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(PURGE, "-1")
        .status()
        .expect("the benchmark runs again");
    Some(status.code().unwrap_or(1))
}

fn main() {
    if let Some(code) = steady_allocator() {
        std::process::exit(code);
    }
    let bench = std::env::args().any(|a| a == "--bench");
    let zstd1 = || vec![Codec::bytes(), Codec::zstd(1)];
    let (n, chunk, shard) = if bench { (8192, 512, 2048) } else { (256, 64, 128) };
    let inner = if bench { 128 } else { 32 };
    let cases = [
        Case { name: "big_zstd", n, chunk, codec_chunk: chunk, codecs: zstd1() },
        Case {
            name: "sharded",
            n,
            chunk: shard,
            codec_chunk: inner,
            codecs: vec![Codec::Sharding(ShardingConfig::new(vec![inner as u64; 2]).with_codecs(zstd1()))],
        },
    ];
    for case in &cases {
        measure(case, if bench { 15 } else { 1 }, bench);
    }
}
