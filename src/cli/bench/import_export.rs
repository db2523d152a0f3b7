//! `import_export`: the `small_chunks` and `sharded` arrays in a database are exported to a
//! folder and to a zip, and each is imported back into a new database of the same backend. Every
//! step runs as its own `zarrdb export` / `zarrdb import` process, as a user would run it, so its
//! time includes opening the database and its peak RSS (its `VmHWM`) is the step's alone.
//! MB/s counts the bytes copied (the stored, compressed values); `export_array_MBps` counts the
//! array's uncompressed bytes, comparable with a library writing the array to a folder.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{json, Value};
use zarrdb::{Array, Database};

use super::target::Target;
use super::whole_array::{data, metadata};
use super::{median, PEAK_RSS_ENV};
use crate::cli::CliError;

const WORKLOADS: [&str; 2] = ["small_chunks", "sharded"];

/// Seconds and peak RSS (bytes) of one child process.
struct Step {
    secs: f64,
    peak_rss: u64,
}

pub(crate) fn run(target: &Target, runs: usize) -> Result<Vec<Value>, CliError> {
    let Some(backend) = target.backend() else {
        return Ok(Vec::new());
    };
    let folder = target.folder().join(format!("import-export-{}", target.name));
    let mut figures = Vec::new();
    for workload in WORKLOADS {
        let array_bytes = data(workload);
        let source = folder.join("source");
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::create_dir_all(&folder)?;
        let stored = {
            let db = Database::builder().backend(backend).create(&source)?;
            let meta = metadata(workload).ok_or_else(|| CliError::new(format!("unknown workload {workload}")))?;
            let shape = meta.shape.clone();
            let array = Array::create(db.store(), "/bench", meta)?;
            array.write_region_bytes(&vec![0; shape.len()], &shape, &array_bytes)?;
            array.stored_chunks()?.iter().map(|(_, size)| size).sum::<u64>()
        };
        let locator = |path: &Path| format!("{}:{}", backend.name(), path.display());
        for format in ["directory", "zip"] {
            let (mut export, mut import) = (Vec::new(), Vec::new());
            let (mut export_rss, mut import_rss) = (0u64, 0u64);
            for _ in 0..runs {
                let out = folder.join(if format == "zip" { "out.zip" } else { "out" });
                let back = folder.join("back");
                let e = step(&["export", &locator(&source), &out.display().to_string()], &folder)?;
                let i = step(&["import", &out.display().to_string(), &locator(&back)], &folder)?;
                check_imported(backend, &back, stored)?;
                export.push(e.secs);
                import.push(i.secs);
                export_rss = export_rss.max(e.peak_rss);
                import_rss = import_rss.max(i.peak_rss);
                let _ = std::fs::remove_dir_all(&out);
                let _ = std::fs::remove_file(&out);
                let _ = std::fs::remove_dir_all(&back);
                let _ = std::fs::remove_file(&back);
            }
            let (export, import) = (median(export), median(import));
            let mb = |bytes: u64, secs: f64| (bytes as f64 / 1e6 / secs * 10.0).round() / 10.0;
            let rss = |bytes: u64| (bytes as f64 / 1e6).round();
            figures.push(json!({
                "workload": "import_export",
                "array": workload,
                "backend": target.name,
                "format": format,
                "stored_MB": (stored as f64 / 1e6).round(),
                "export_MBps": mb(stored, export),
                "export_array_MBps": mb(array_bytes.len() as u64, export),
                "import_MBps": mb(stored, import),
                "export_peak_rss_MB": rss(export_rss),
                "import_peak_rss_MB": rss(import_rss),
                "peak_rss_MB": rss(export_rss.max(import_rss)),
                "runs": runs,
            }));
        }
        let _ = std::fs::remove_dir_all(&folder);
    }
    Ok(figures)
}

/// Run `zarrdb ARGS` and measure it: wall time and the child's own peak RSS.
fn step(args: &[&str], folder: &Path) -> Result<Step, CliError> {
    let exe = std::env::current_exe()?;
    let rss_file = folder.join("peak-rss");
    let _ = std::fs::remove_file(&rss_file);
    let start = Instant::now();
    let status = Command::new(exe).args(args).env(PEAK_RSS_ENV, &rss_file).stdout(Stdio::null()).status()?;
    let secs = start.elapsed().as_secs_f64();
    if !status.success() {
        return Err(CliError::new(format!("bench: `zarrdb {}` failed ({status})", args.join(" "))));
    }
    let peak_rss = std::fs::read_to_string(&rss_file)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| CliError::new("bench: the child did not report its peak RSS (is /proc mounted?)"))?;
    Ok(Step { secs, peak_rss })
}

/// The imported copy holds as many stored bytes as the source.
fn check_imported(backend: zarrdb::Backend, path: &Path, stored: u64) -> Result<(), CliError> {
    let db = Database::builder().backend(backend).open(path)?;
    let found: u64 = Array::open(db.store(), "/bench")?.stored_chunks()?.iter().map(|(_, size)| size).sum();
    if found != stored {
        return Err(CliError::new(format!("import_export: the imported copy holds {found} bytes, not {stored}")));
    }
    Ok(())
}
