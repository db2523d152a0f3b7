//! `zarrdb bench`: the workloads of ../shared/BENCHMARKS.md on the available backends.
//! Figures are medians of `--runs` runs; `--json` prints the figure names BENCHMARKS.md defines.

mod counting;
pub(crate) mod data;
mod sharded_partial;
mod whole_array;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};
use zarrdb::{DirectoryStore, MemoryStore, Store};

use super::{CliError, CliResult};

pub(crate) const BACKENDS: [&str; 2] = ["directory", "memory"];

/// Options of `zarrdb bench`.
pub(crate) struct Options {
    pub workloads: Vec<String>,
    pub backends: Vec<String>,
    pub runs: usize,
    pub json: bool,
    pub dir: Option<PathBuf>,
}

/// An empty store of the backend; directory stores live at `base`, emptied first.
fn fresh_store(backend: &str, base: &std::path::Path) -> Result<Arc<dyn Store>, CliError> {
    Ok(match backend {
        "memory" => Arc::new(MemoryStore::new()),
        _ => {
            let _ = std::fs::remove_dir_all(base);
            Arc::new(DirectoryStore::create(base)?)
        }
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub(crate) fn run(opts: Options) -> CliResult {
    let workloads: Vec<String> = if opts.workloads.is_empty() {
        whole_array::NAMES.iter().map(|s| s.to_string()).collect()
    } else {
        opts.workloads.clone()
    };
    let backends: Vec<String> = if opts.backends.is_empty() { vec!["directory".into()] } else { opts.backends.clone() };
    for w in &workloads {
        if !whole_array::NAMES.contains(&w.as_str()) && w != "sharded_partial" {
            return Err(CliError(format!(
                "unknown workload \"{w}\" (this build has: {}, sharded_partial)",
                whole_array::NAMES.join(", ")
            )));
        }
    }
    for b in &backends {
        if !BACKENDS.contains(&b.as_str()) {
            return Err(CliError(format!(
                "backend \"{b}\" is not available in this build (available: {})",
                BACKENDS.join(", ")
            )));
        }
    }
    let base = opts.dir.clone().unwrap_or_else(std::env::temp_dir).join(format!("zarrdb-bench-{}", std::process::id()));
    let mut results = Vec::new();
    for workload in &workloads {
        if workload == "sharded_partial" {
            for backend in &backends {
                let store = fresh_store(backend, &base)?;
                let figure = sharded_partial::run(store, backend)?;
                let _ = std::fs::remove_dir_all(&base);
                if !opts.json {
                    println!(
                        "sharded_partial {backend:<10} {} regions/s, {} bytes fetched per region (inner chunk {} bytes + index {} bytes)",
                        figure["regions_per_s"], figure["bytes_fetched_per_region"], figure["inner_chunk_bytes"], figure["index_bytes"]
                    );
                }
                results.push(figure);
            }
            continue;
        }
        let data = whole_array::data(workload);
        let mb = data.len() as f64 / 1e6;
        for backend in &backends {
            let mut writes = Vec::new();
            let mut reads = Vec::new();
            let mut stored = 0;
            for _ in 0..opts.runs.max(1) {
                let store = fresh_store(backend, &base)?;
                let run = whole_array::run_once(workload, store, &data)?;
                writes.push(mb / run.write_s);
                reads.push(mb / run.read_s);
                stored = run.stored_bytes;
            }
            let _ = std::fs::remove_dir_all(&base);
            let figure = json!({
                "workload": workload,
                "backend": backend,
                "write_MBps": (median(writes) * 10.0).round() / 10.0,
                "read_MBps": (median(reads) * 10.0).round() / 10.0,
                "runs": opts.runs.max(1),
                "uncompressed_MB": (mb * 10.0).round() / 10.0,
                "stored_MB": (stored as f64 / 1e5).round() / 10.0,
            });
            if !opts.json {
                println!(
                    "{workload:<13} {backend:<10} write {:>8.1} MB/s  read {:>8.1} MB/s  ({} MB stored of {} MB)",
                    figure["write_MBps"].as_f64().unwrap_or(0.0),
                    figure["read_MBps"].as_f64().unwrap_or(0.0),
                    figure["stored_MB"],
                    figure["uncompressed_MB"],
                );
            }
            results.push(figure);
        }
    }
    if opts.json {
        println!("{}", serde_json::to_string_pretty(&Value::Array(results))?);
    }
    Ok(())
}
