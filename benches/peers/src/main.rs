//! One measurement in a fresh process: write or read one shared workload (../shared/bench) with
//! zarrdb (redb or LMDB, with or without history) or with zarrs on a directory, and print the
//! seconds it took as one JSON line. `run.py` beside this file runs it, tensorstore and
//! zarr-python in turn and prints ratios.
//!
//! ```text
//! peer TARGET PHASE WORKLOAD PATH --workloads FILE [--fast] [--sync]
//!   TARGET   redb | lmdb | redb-history | lmdb-history | zarrs
//!   PHASE    write | read
//!   --fast   zarrdb only: fast commits (made durable at close, which is timed)
//!   --sync   zarrs only: fsync every file and folder written, timed with the write
//! ```
//!
//! Timed: a write creates the array, writes the whole array in one call (zarrdb: one region
//! write; zarrs: `store_chunks` over every chunk, its fastest whole-array path) and closes; a read
//! opens the store and the array and reads the whole array in one call. The data is generated
//! before the clock starts, and a read is checked against it after the clock stops.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
use serde_json::{json, Value};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

struct Args {
    target: String,
    phase: String,
    workload: Value,
    path: PathBuf,
    fast: bool,
    sync: bool,
}

fn args() -> Result<Args> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| argv.iter().any(|a| a == name);
    let value_of = |name: &str| argv.iter().position(|a| a == name).and_then(|i| argv.get(i + 1)).cloned();
    let positional: Vec<&String> = argv
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && (*i == 0 || argv[i - 1] != "--workloads"))
        .map(|(_, a)| a)
        .collect();
    let [target, phase, workload, path] = positional[..] else {
        return Err("usage: peer TARGET PHASE WORKLOAD PATH --workloads FILE [--fast] [--sync]".into());
    };
    let file = value_of("--workloads").ok_or("--workloads FILE is required")?;
    let all: Value = serde_json::from_str(&std::fs::read_to_string(file)?)?;
    let workload = all.get(workload.as_str()).cloned().ok_or_else(|| format!("no workload {workload}"))?;
    Ok(Args {
        target: target.clone(),
        phase: phase.clone(),
        workload,
        path: PathBuf::from(path),
        fast: flag("--fast"),
        sync: flag("--sync"),
    })
}

/// The shared data formula (../shared/bench/bench_data.py), as little-endian bytes.
fn bench_bytes(n: u64) -> Vec<u8> {
    fn value(i: u64) -> f32 {
        let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let u = (z >> 40) as f64 / (1u64 << 24) as f64 - 0.5;
        ((i as f64 / 1000.0).sin() * 1000.0 + u) as f32
    }
    let mut out = vec![0u8; n as usize * 4];
    out.par_chunks_mut(4 << 16).enumerate().for_each(|(block, bytes)| {
        let first = block as u64 * (1 << 16);
        for (k, slot) in bytes.chunks_exact_mut(4).enumerate() {
            slot.copy_from_slice(&value(first + k as u64).to_le_bytes());
        }
    });
    out
}

fn shape_of(workload: &Value, field: &str) -> Vec<u64> {
    workload[field].as_array().map(|v| v.iter().filter_map(Value::as_u64).collect()).unwrap_or_default()
}

/// fsync every file and folder below `dir`, and `dir` itself.
fn sync_tree(dir: &Path) -> Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            sync_tree(&path)?;
        } else {
            std::fs::File::open(&path)?.sync_all()?;
        }
    }
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

fn zarrdb_run(args: &Args, shape: &[u64], chunks: &[u64], data: Option<&[u8]>) -> Result<Vec<u8>> {
    use zarrdb::metadata::NamedConfig;
    use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Durability};
    let backend = if args.target.starts_with("lmdb") { Backend::Lmdb } else { Backend::Redb };
    let durability = if args.fast { Durability::Fast } else { Durability::Durable };
    let history = args.target.ends_with("-history");
    let file = args.path.join("db");
    let origin = vec![0; shape.len()];
    match data {
        Some(bytes) => {
            let db = Database::builder().backend(backend).durability(durability).history(history).create(&file)?;
            let mut meta = ArrayMetadata::new(DataType::Float32, shape.to_vec(), chunks.to_vec());
            meta.codecs = NamedConfig::parse_list(&args.workload["codecs"])?;
            let array = Array::create(db.store(), "/bench", meta)?;
            array.write_region_bytes(&origin, shape, bytes)?;
            Ok(Vec::new())
        }
        None => {
            let db = Database::builder().backend(backend).read_only(true).open(&file)?;
            Ok(Array::open(db.store(), "/bench")?.read_region_bytes(&origin, shape)?)
        }
    }
}

fn zarrs_run(args: &Args, shape: &[u64], chunks: &[u64], data: Option<&[u8]>) -> Result<Vec<u8>> {
    use std::borrow::Cow;
    use zarrs::array::{Array, ArrayBytes, ArrayMetadata, ArraySubset};
    use zarrs::filesystem::FilesystemStore;
    let dir = args.path.join("zarr");
    match data {
        Some(bytes) => {
            std::fs::create_dir_all(&dir)?;
            let store = Arc::new(FilesystemStore::new(&dir)?);
            let metadata = json!({
                "zarr_format": 3,
                "node_type": "array",
                "shape": shape,
                "data_type": "float32",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
                "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                "fill_value": 0.0,
                "codecs": args.workload["codecs"],
            });
            let metadata: ArrayMetadata = serde_json::from_value(metadata)?;
            let array = Array::new_with_metadata(store, "/", metadata)?;
            array.store_metadata()?;
            // The data's own bytes, as zarrdb gets them: no conversion inside the clock.
            let grid: Vec<u64> = shape.iter().zip(chunks).map(|(s, c)| s.div_ceil(*c)).collect();
            array.store_chunks(&ArraySubset::new_with_shape(grid), ArrayBytes::new_flen(Cow::Borrowed(bytes)))?;
            if args.sync {
                sync_tree(&dir)?;
            }
            Ok(Vec::new())
        }
        None => {
            let store = Arc::new(FilesystemStore::new(&dir)?);
            let array = Array::open(store, "/")?;
            let read: ArrayBytes<'static> =
                array.retrieve_array_subset(&ArraySubset::new_with_shape(shape.to_vec()))?;
            Ok(read.into_fixed()?.into_owned())
        }
    }
}

fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// The machine's limits, measured now: memcpy into fresh memory (one core, all cores) and into
/// warm memory, zstd level 1 on one core, 4 KiB write + fdatasync per second and 64 MiB write +
/// fdatasync MB/s (in the folder given, default the temporary folder).
fn limits(folder: &Path) -> Result<Value> {
    let source = bench_bytes(64 << 20);
    let mb = source.len() as f64 / 1e6;
    let start = Instant::now();
    let mut fresh = source.to_vec();
    let fresh_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    fresh.copy_from_slice(&source);
    let warm_s = start.elapsed().as_secs_f64();
    // Fresh memory on every core at once: a whole-array read fills its fresh output array so,
    // in parallel, which bounds any read from below.
    let start = Instant::now();
    let mut parallel = vec![0u8; source.len()];
    let piece = source.len().div_ceil(rayon::current_num_threads());
    parallel.par_chunks_mut(piece).zip(source.par_chunks(piece)).for_each(|(to, from)| to.copy_from_slice(from));
    let parallel_s = start.elapsed().as_secs_f64();
    std::hint::black_box(&parallel);
    let start = Instant::now();
    let compressed = zstd::bulk::compress(&source, 1)?;
    let zstd_s = start.elapsed().as_secs_f64();
    std::hint::black_box((&fresh, &compressed));

    let dir = tempfile_dir(folder)?;
    let file = std::fs::File::create(dir.join("probe"))?;
    let start = Instant::now();
    let mut syncs = 0u64;
    while start.elapsed().as_secs_f64() < 1.0 {
        std::os::unix::fs::FileExt::write_all_at(&file, &[7u8; 4096], 0)?;
        file.sync_data()?;
        syncs += 1;
    }
    let fsync_per_s = syncs as f64 / start.elapsed().as_secs_f64();
    let big = std::fs::File::create(dir.join("bulk"))?;
    let block = bench_bytes(1 << 20);
    let start = Instant::now();
    for i in 0..64u64 {
        std::os::unix::fs::FileExt::write_all_at(&big, &block, i * block.len() as u64)?;
    }
    big.sync_data()?;
    let bulk_mb = 64.0 * block.len() as f64 / 1e6 / start.elapsed().as_secs_f64();
    std::fs::remove_dir_all(&dir)?;
    let round = |x: f64| (x * 10.0).round() / 10.0;
    Ok(json!({
        "memcpy_fresh_MBps": round(mb / fresh_s),
        "memcpy_warm_MBps": round(mb / warm_s),
        "memcpy_fresh_all_cores_MBps": round(mb / parallel_s),
        "zstd1_MBps_per_core": round(mb / zstd_s),
        "fsync_4k_per_s": round(fsync_per_s),
        "write_fdatasync_MBps": round(bulk_mb),
    }))
}

/// A fresh folder inside `folder`.
fn tempfile_dir(folder: &Path) -> Result<PathBuf> {
    let dir = folder.join(format!("zarrdb-peer-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn main() -> Result<()> {
    if std::env::args().nth(1).as_deref() == Some("limits") {
        let folder = std::env::args().nth(2).map_or_else(std::env::temp_dir, PathBuf::from);
        println!("{}", limits(&folder)?);
        return Ok(());
    }
    let args = args()?;
    let shape = shape_of(&args.workload, "shape");
    let chunks = shape_of(&args.workload, "chunks");
    let data = bench_bytes(shape.iter().product());
    let run = |data: Option<&[u8]>| match args.target.as_str() {
        "redb" | "lmdb" | "redb-history" | "lmdb-history" => zarrdb_run(&args, &shape, &chunks, data),
        "zarrs" => zarrs_run(&args, &shape, &chunks, data),
        other => Err(format!("unknown target {other}").into()),
    };
    let rss_before = peak_rss();
    let start = Instant::now();
    let read = match args.phase.as_str() {
        "write" => run(Some(&data))?,
        "read" => run(None)?,
        other => return Err(format!("unknown phase {other}").into()),
    };
    let seconds = start.elapsed().as_secs_f64();
    if args.phase == "read" && read != data {
        return Err("the array read back differs from the data written".into());
    }
    // Memory beyond the caller's own buffers: the data written, or the data and the array read.
    let buffers = if args.phase == "read" { data.len() as u64 } else { 0 };
    let overhead = peak_rss().saturating_sub(rss_before).saturating_sub(buffers);
    let report = json!({"seconds": seconds, "bytes": data.len(), "overhead_rss_bytes": overhead});
    println!("{report}");
    Ok(())
}
