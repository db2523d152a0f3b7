//! `zarrdb import SRC DB [--at NODE] [--exclude PATTERN]... [--skip-unreadable]` and
//! `zarrdb export DB DST [--overwrite] [--node NODE] [--no-consolidated]`; SRC and DST may be
//! `s3://` locators. On a terminal a progress bar runs on stderr; otherwise only the one-line
//! summary is printed.

use std::path::Path;
use std::sync::Arc;

use indicatif::ProgressBar;
use serde_json::{json, Value};
use zarrdb::store::ObjectStore;
use zarrdb::transfer::{ExportReport, ImportReport, Progress};
use zarrdb::{Database, ExportOptions, ImportOptions};

use super::locator::{self, Kind};
use super::{progress, CliError, CliResult};

/// redb's page cache for an import: every page is written once, so a cache only holds memory;
/// redb's default (1 GiB) would grow the process by the dataset's size, up to that. redb writes
/// dirty pages beyond half the cache to the file before the commit. (An export opens the
/// database read-only, which gets a small cache by default.)
const IMPORT_REDB_CACHE: usize = 32 << 20;

pub(crate) fn import(
    source: &str,
    destination: &str,
    at: &str,
    exclude: Vec<String>,
    skip_unreadable: bool,
    as_json: bool,
) -> CliResult {
    let bar = progress::bytes(0, "");
    let mut options = ImportOptions::default().at(at).skip_unreadable(skip_unreadable);
    for pattern in exclude {
        options = options.exclude(pattern);
    }
    if let Some(bar) = bar.clone() {
        options = options.progress(move |p| show(&bar, p));
    }
    let (backend, path) = locator::database(destination, "import into")?;
    // A database this command creates and then fails to fill is removed again: a failed import
    // leaves no trace, not even an empty database.
    let existed = Path::new(path).exists();
    let remote = match locator::parse(source)? {
        (Kind::Object, locator) => Some(Arc::new(ObjectStore::open(locator)?)),
        _ => None,
    };
    let report =
        Database::builder().backend(backend).redb_cache_size(IMPORT_REDB_CACHE).create(path).and_then(
            |db| match remote {
                Some(remote) => db.copy_from(remote, "/", &options),
                None => db.import(source, &options),
            },
        );
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    match report {
        Ok(report) if as_json => {
            outln!("{}", serde_json::to_string_pretty(&report_json(&report, source, destination, at))?)
        }
        Ok(report) => summarize(&report, source, destination, at),
        Err(e) => {
            if !existed {
                let _ = std::fs::remove_dir_all(path).or_else(|_| std::fs::remove_file(path));
            }
            Err(e.into())
        }
    }
}

pub(crate) fn export(
    source: &str,
    destination: &str,
    node: &str,
    consolidated: bool,
    overwrite: bool,
    as_json: bool,
) -> CliResult {
    let (base, version) = locator::split_version(source);
    let (Kind::Database(backend), path) = locator::parse(base)? else {
        return Err(CliError::new(format!(
            "export from \"{source}\": not a database (redb file, LMDB or sled folder)"
        )));
    };
    let to = export_destination(destination)?;
    if overwrite && !matches!(to, Destination::Object) {
        return Err(CliError::new(format!(
            "export to \"{destination}\": --overwrite is for s3:// destinations; a folder or archive is never overwritten"
        )));
    }
    let database = Database::builder().backend(backend).read_only(true).open(path)?;
    let bar = progress::bytes(0, "");
    let mut options = ExportOptions::default().node(node).consolidated(consolidated).overwrite(overwrite);
    if let Some(version) = version {
        options = options.version(zarrdb::db::VersionRef::named(version));
    }
    if let Destination::Local { zip: Some(zip), .. } = to {
        options = options.zip(zip);
    }
    if let Some(bar) = bar.clone() {
        options = options.progress(move |p| show(&bar, p));
    }
    let report = match to {
        Destination::Local { path, .. } => database.export(Path::new(path), &options),
        Destination::Object => ObjectStore::open(destination)
            .map_err(zarrdb::Error::from)
            .and_then(|bucket| database.publish(&bucket, &options)),
    };
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let report = report?;
    if as_json {
        return outln!("{}", serde_json::to_string_pretty(&export_json(&report, source, destination, node))?);
    }
    outln!(
        "exported {node} of {source} to {destination}: {} values, {} bytes{}",
        report.values,
        report.bytes,
        if report.consolidated { ", consolidated metadata in the root zarr.json" } else { "" }
    )?;
    Ok(())
}

/// Where an export goes.
enum Destination<'a> {
    /// A folder or a zip archive (`zip: None`: decided by the name).
    Local { path: &'a str, zip: Option<bool> },
    /// `s3://`: the destination locator as given.
    Object,
}

/// Where an export goes and in which layout: `zip:PATH` and `dir:PATH` say it, a bare path is
/// an archive when its name ends in `.zip` (decided by the export), a folder otherwise; `s3://`
/// is object storage. A database locator is refused: export writes the standard layouts.
fn export_destination(destination: &str) -> Result<Destination<'_>, CliError> {
    if let Some(path) = destination.strip_prefix("zip:") {
        return Ok(Destination::Local { path, zip: Some(true) });
    }
    if let Some(path) = destination.strip_prefix("dir:") {
        return Ok(Destination::Local { path, zip: Some(false) });
    }
    match locator::parse(destination)? {
        (Kind::Database(backend), _) if destination.starts_with(&format!("{}:", backend.name())) => Err(CliError::new(
            format!("export to \"{destination}\": export writes a directory or a zip archive, not a database"),
        )),
        (Kind::Object, _) => Ok(Destination::Object),
        _ => Ok(Destination::Local { path: destination, zip: None }),
    }
}

/// An export's report as one JSON document (`--json`; also `cp` into a zip archive).
pub(crate) fn export_json(report: &ExportReport, source: &str, destination: &str, node: &str) -> Value {
    json!({
        "source": source,
        "destination": destination,
        "node": node,
        "values": report.values,
        "bytes": report.bytes,
        "consolidated": report.consolidated,
    })
}

/// An import's or copy's report as one JSON document (`--json`).
pub(crate) fn report_json(report: &ImportReport, source: &str, destination: &str, at: &str) -> Value {
    let pairs = |list: &[(String, String)]| -> Vec<Value> {
        list.iter().map(|(k, why)| json!({"key": k, "reason": why})).collect()
    };
    json!({
        "source": source,
        "destination": destination,
        "at": at,
        "layout": report.layout,
        "nodes": report.nodes,
        "chunks": report.chunks,
        "bytes": report.bytes,
        "skipped_keys": pairs(&report.skipped),
        "duplicates": report.duplicates,
        "warnings": pairs(&report.warnings),
        "consolidated_metadata": report.consolidated_metadata,
        "excluded": report.excluded,
        "skipped_nodes": report.skipped_nodes.iter().map(|(n, e)| json!({"node": n, "reason": e.to_string()})).collect::<Vec<_>>(),
    })
}

fn summarize(report: &ImportReport, source: &str, destination: &str, at: &str) -> CliResult {
    for name in &report.duplicates {
        eprintln!("zarrdb: warning: {source} holds \"{name}\" more than once; the last one was imported");
    }
    for key in &report.consolidated_metadata {
        eprintln!(
            "zarrdb: note: consolidated metadata in {key} was not copied: a database never stores it (it would go stale); the group keeps a request for it, served afresh to Python readers and exports"
        );
    }
    for (key, warning) in &report.warnings {
        eprintln!("zarrdb: warning: {key}: {warning}");
    }
    for node in &report.excluded {
        outln!("excluded /{node} and everything below it")?;
    }
    for (node, error) in &report.skipped_nodes {
        // One line each, whatever the error's message holds.
        outln!("skipped /{node} and everything below it: {}", error.to_string().replace(['\n', '\r'], " "))?;
    }
    outln!(
        "imported {} hierarchy {source} into {destination} at {at}: {} nodes, {} chunks, {} bytes{}",
        report.layout,
        report.nodes,
        report.chunks,
        report.bytes,
        match report.skipped.len() {
            0 => String::new(),
            n => format!("; {n} source keys not copied (converted metadata, keys of no node or outside a grid)"),
        }
    )?;
    Ok(())
}

fn show(bar: &ProgressBar, p: Progress) {
    bar.set_length(p.bytes_total);
    bar.set_position(p.bytes_done);
    bar.set_message(format!("{}/{} values", p.values_done, p.values_total));
}
