//! `import_export`: the `small_chunks` and `sharded` arrays in a database are exported to a
//! folder and to a zip, and each is imported back into a new database of the same backend. Every
//! step runs as its own `zarrdb export` / `zarrdb import` process, as a user would run it, so its
//! time includes opening the database and its peak RSS (from `wait4`) is the step's alone.
//! MB/s counts the bytes copied (the stored, compressed values); `export_array_MBps` counts the
//! array's uncompressed bytes, comparable with a library writing the array to a folder.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{json, Value};
use zarrdb::{Array, Database};

use super::median;
use super::target::Target;
use super::whole_array::{data, metadata};
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
            let meta = metadata(workload).ok_or_else(|| CliError(format!("unknown workload {workload}")))?;
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
                let e = step(&["export", &locator(&source), &out.display().to_string()])?;
                let i = step(&["import", &out.display().to_string(), &locator(&back)])?;
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

/// Run `zarrdb ARGS` and measure it.
fn step(args: &[&str]) -> Result<Step, CliError> {
    let exe = std::env::current_exe()?;
    let start = Instant::now();
    let child = Command::new(exe).args(args).stdout(Stdio::null()).spawn()?;
    let (status, usage) = wait_with_usage(child.id())?;
    let secs = start.elapsed().as_secs_f64();
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(CliError(format!("bench: `zarrdb {}` failed (wait status {status})", args.join(" "))));
    }
    // ru_maxrss is in KiB on Linux.
    Ok(Step { secs, peak_rss: usage.ru_maxrss.max(0) as u64 * 1024 })
}

/// Reap the child `pid` and return its wait status and resource usage (its own peak RSS, which
/// `std::process::Child::wait` does not report).
fn wait_with_usage(pid: u32) -> Result<(i32, libc::rusage), CliError> {
    let mut status = 0;
    // SAFETY: rusage is plain old data; all-zero is a valid value that wait4 overwrites.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = libc::pid_t::try_from(pid).map_err(|_| CliError("bench: child pid out of range".into()))?;
    loop {
        // SAFETY: `pid` is our own unreaped child; the two pointers are valid for writes.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            return Ok((status, usage));
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(CliError(format!("bench: waiting for a child failed: {err}")));
        }
    }
}

/// The imported copy holds as many stored bytes as the source.
fn check_imported(backend: zarrdb::Backend, path: &Path, stored: u64) -> Result<(), CliError> {
    let db = Database::builder().backend(backend).open(path)?;
    let found: u64 = Array::open(db.store(), "/bench")?.stored_chunks()?.iter().map(|(_, size)| size).sum();
    if found != stored {
        return Err(CliError(format!("import_export: the imported copy holds {found} bytes, not {stored}")));
    }
    Ok(())
}
