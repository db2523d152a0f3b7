//! `zarrdb bench`: the workloads of ../shared/BENCHMARKS.md on the available backends.
//! Figures are medians of `--runs` runs; `--json` prints the figure names BENCHMARKS.md defines.

mod append_rows;
mod band_writes;
mod compact;
mod concurrent_unaligned;
mod counting;
pub(crate) mod data;
mod group_commit;
mod history;
mod history_gc;
mod import_export;
mod list_children;
mod sharded_partial;
mod target;
mod whole_array;

use std::path::PathBuf;

use serde_json::Value;
use zarrdb::Durability;

use super::{CliError, CliResult};
use target::Target;

/// Workloads that are not whole-array ones.
const ENGINE_WORKLOADS: [&str; 11] = [
    "sharded_partial",
    "list_children",
    "append_rows",
    "band_writes",
    "concurrent_unaligned",
    "group_commit",
    "group_commit_new",
    "import_export",
    "compact",
    "history",
    "history_gc",
];

/// Options of `zarrdb bench`.
pub(crate) struct Options {
    pub workloads: Vec<String>,
    pub backends: Vec<String>,
    pub runs: usize,
    pub json: bool,
    pub dir: Option<PathBuf>,
    pub durable: bool,
}

/// `import_export` runs `zarrdb import` and `zarrdb export` as child processes and needs each
/// one's own peak RSS. The kernel's `ru_maxrss` of a child counts the parent's memory it was
/// spawned from, so the child reports its `VmHWM` (its own address space since exec) into the
/// file this variable names.
pub(crate) const PEAK_RSS_ENV: &str = "ZARRDB_BENCH_PEAK_RSS_FILE";

/// Write this process's peak RSS to the file `PEAK_RSS_ENV` names, if it is set.
pub(crate) fn report_peak_rss() {
    let Some(path) = std::env::var_os(PEAK_RSS_ENV) else { return };
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    if let Some(kib) = kib {
        let _ = std::fs::write(path, (kib * 1024).to_string());
    }
}

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub(crate) fn run(opts: Options) -> CliResult {
    let workloads: Vec<String> = if opts.workloads.is_empty() {
        whole_array::NAMES.iter().map(|s| s.to_string()).collect()
    } else {
        opts.workloads.clone()
    };
    let backends: Vec<String> = if opts.backends.is_empty() {
        ["redb", "lmdb", "sled", "directory"].map(String::from).to_vec()
    } else {
        opts.backends.clone()
    };
    for w in &workloads {
        if !whole_array::NAMES.contains(&w.as_str()) && !ENGINE_WORKLOADS.contains(&w.as_str()) {
            return Err(CliError::new(format!(
                "unknown workload \"{w}\" (this build has: {}, {})",
                whole_array::NAMES.join(", "),
                ENGINE_WORKLOADS.join(", ")
            )));
        }
    }
    let base = opts.dir.clone().unwrap_or_else(std::env::temp_dir).join(format!("zarrdb-bench-{}", std::process::id()));
    let durability = if opts.durable { Durability::Durable } else { Durability::Fast };
    let targets = backends.iter().map(|b| Target::new(b, &base, durability)).collect::<Result<Vec<_>, _>>()?;
    let mut results = Vec::new();
    for workload in &workloads {
        if whole_array::NAMES.contains(&workload.as_str()) {
            for figure in whole_array::alternated(workload, &targets, opts.runs.max(1))? {
                if !opts.json {
                    print_figure(&figure)?;
                }
                results.push(figure);
            }
            continue;
        }
        for target in &targets {
            let figures = match workload.as_str() {
                "sharded_partial" => vec![sharded_partial::run(target.create()?, &target.name)?],
                "list_children" if target.name == "directory" => {
                    if !opts.json {
                        outln!("list_children   directory  skipped: it would create 1,000,000 files")?;
                    }
                    continue;
                }
                "append_rows" => append_rows::run(target, opts.runs.max(1))?,
                "band_writes" => band_writes::run(target, opts.runs.max(1))?,
                "concurrent_unaligned" => concurrent_unaligned::run(target, opts.runs.max(1))?,
                "group_commit" => group_commit::run(target, opts.runs.max(1), group_commit::Chunks::Rewrite)?,
                "group_commit_new" => group_commit::run(target, opts.runs.max(1), group_commit::Chunks::New)?,
                "import_export" => import_export::run(target, opts.runs.max(1))?,
                "compact" => compact::run(target, opts.runs.max(1))?,
                "history" => vec![history::run(target)?],
                "history_gc" => history_gc::run(target)?,
                _ => vec![list_children::run(target)?],
            };
            target.remove();
            for figure in figures {
                if !opts.json {
                    print_figure(&figure)?;
                }
                results.push(figure);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&base);
    if opts.json {
        outln!("{}", serde_json::to_string_pretty(&Value::Array(results))?)?;
    }
    Ok(())
}

fn print_figure(f: &Value) -> CliResult {
    let (workload, backend) = (f["workload"].as_str().unwrap_or(""), f["backend"].as_str().unwrap_or(""));
    match workload {
        "sharded_partial" => outln!(
            "sharded_partial {backend:<10} {} regions/s, {} bytes fetched per region (inner chunk {} bytes + index {} bytes)",
            f["regions_per_s"], f["bytes_fetched_per_region"], f["inner_chunk_bytes"], f["index_bytes"]
        ),
        "history" => outln!(
            "history         {backend:<10} {} chunk keys: tag {} ms (a small commit without history {} ms), diff {} ms ({} keys, {} commits apart), open a version {} ms, read version {} / head {} chunks/s",
            f["chunk_keys"],
            f["tag_ms"],
            f["small_commit_ms"],
            f["diff_ms"],
            f["diff_keys"],
            f["commits_between"],
            f["open_version_ms"],
            f["read_version_chunks_per_s"],
            f["read_head_chunks_per_s"],
        ),
        "history_gc" => outln!(
            "history_gc      {backend:<10} {} ({} chunk keys): collect {} s (the first, after writing every chunk: {} s), freed {} values ({} bytes) of {} versions, {} µs per value",
            f["case"].as_str().unwrap_or(""),
            f["chunk_keys"],
            f["collect_s"],
            f["first_collect_s"],
            f["freed_values"],
            f["freed_bytes"],
            f["expired_versions"],
            f["us_per_freed_value"],
        ),
        "list_children" => outln!(
            "list_children   {backend:<10} {} ms to list {} children, one array holding {} chunk keys",
            f["ms"], f["children"], f["chunk_keys"]
        ),
        "append_rows" => outln!(
            "append_rows     {backend:<10} {} thread(s): {} appends/s, fsync {}/s, ratio {} ({} appends per run; commits: {})",
            f["threads"],
            f["appends_per_s"],
            f["fsync_per_s"],
            f["ratio_to_fsync"],
            f["appends"],
            f["durability"].as_str().unwrap_or(""),
        ),
        "band_writes" => outln!(
            "band_writes     {backend:<10} {} bands: write {} MB/s, write and close {} MB/s (commits: {})",
            f["bands"],
            f["write_MBps"],
            f["write_and_close_MBps"],
            f["durability"].as_str().unwrap_or(""),
        ),
        "group_commit" | "group_commit_new" => outln!(
            "{workload:<15} {backend:<10} {} thread(s): {} commits/s, fsync {}/s, ratio {} (commits: {})",
            f["threads"],
            f["commits_per_s"],
            f["fsync_per_s"],
            f["ratio_to_fsync"],
            f["durability"].as_str().unwrap_or(""),
        ),
        "import_export" => outln!(
            "import_export   {backend:<10} {} via {}: export {} MB/s ({} MB/s of array), import {} MB/s, peak RSS export {} MB / import {} MB ({} MB stored)",
            f["array"].as_str().unwrap_or(""),
            f["format"].as_str().unwrap_or(""),
            f["export_MBps"],
            f["export_array_MBps"],
            f["import_MBps"],
            f["export_peak_rss_MB"],
            f["import_peak_rss_MB"],
            f["stored_MB"],
        ),
        "compact" => outln!(
            "compact         {backend:<10} file / stored: {} written, {} after erasing half, {}",
            f["file_per_stored_written"],
            f["file_per_stored_erased"],
            match (f["file_per_stored_compacted"].as_f64(), f["compact_s"].as_f64()) {
                (Some(ratio), Some(s)) => format!("{ratio} compacted in {s} s"),
                _ => "no compaction on this engine".to_owned(),
            },
        ),
        "concurrent_unaligned" => outln!(
            "concurrent_unaligned {backend:<10} {} thread(s): {} writes/s, {} lost updates (commits: {})",
            f["threads"],
            f["writes_per_s"],
            f["lost_updates"],
            f["durability"].as_str().unwrap_or(""),
        ),
        _ => outln!(
            "{workload:<15} {backend:<10} write {:>8.1} MB/s  read {:>8.1} MB/s  ({} MB stored of {} MB, file {} MB = {}x stored; commits: {})",
            f["write_MBps"].as_f64().unwrap_or(0.0),
            f["read_MBps"].as_f64().unwrap_or(0.0),
            f["stored_MB"],
            f["uncompressed_MB"],
            f["file_MB"],
            f["file_per_stored"],
            f["durability"].as_str().unwrap_or(""),
        ),
    }
}
