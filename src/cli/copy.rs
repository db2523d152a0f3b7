//! `zarrdb cp SRC[:NODE] DST[:NODE]`: a node with everything below it, from any store to a
//! database (one transaction), a folder or a new zip archive, chunk bytes as they are (never
//! decoded or re-encoded). The source is read through one snapshot when it is a database.

use std::path::Path;

use zarrdb::{Database, ExportOptions, ImportOptions};

use super::locator::{self, Kind};
use super::{progress, CliError, CliResult};

/// A locator with an optional node: `data.zarrdb:/grid`, `lmdb:/srv/env:/a`, `dir:out`. The node
/// is what follows the last `:/` unless what precedes it is a bare scheme (`lmdb:/srv/env`). A
/// path ending in `:NAME` is refused unless that file exists (`b.zarrdb:grid` would otherwise
/// name a new file called so, when `b.zarrdb:/grid` was meant).
pub(crate) fn split(text: &str) -> Result<(&str, &str), CliError> {
    let (store, node) = match text.rfind(":/") {
        Some(at) if !SCHEMES.contains(&&text[..at]) => (&text[..at], &text[at + 1..]),
        _ => (text, "/"),
    };
    let path =
        store.split_once(':').map_or(store, |(scheme, rest)| if SCHEMES.contains(&scheme) { rest } else { store });
    let forgotten_slash = path.rsplit_once(':').is_some_and(|(_, last)| !last.is_empty() && !last.contains('/'));
    if forgotten_slash && !std::path::Path::new(path).exists() {
        return Err(CliError::new(format!(
            "\"{text}\": a node follows its store after \":/\" (STORE:/NODE), and no file is called \"{path}\""
        )));
    }
    Ok((store, node))
}

const SCHEMES: [&str; 11] = ["", "dir", "zip", "redb", "lmdb", "sled", "s3", "gs", "az", "zarrdb+s3", "zarrdb+memory"];

pub(crate) fn run(source: &str, destination: &str, as_json: bool) -> CliResult {
    let ((from_store, from_node), (to_store, to_node)) = (split(source)?, split(destination)?);
    let bar = progress::bytes(0, "cp");
    let mut options = ImportOptions::default().at(to_node);
    if let Some(bar) = bar.clone() {
        options = options.progress(move |p| {
            bar.set_length(p.bytes_total);
            bar.set_position(p.bytes_done);
        });
    }
    let report = match locator::parse(to_store)? {
        (Kind::Database(backend), path) => {
            // Within one database the source is a snapshot of the same handle (a second handle
            // on the file would be refused).
            let same = locator::same_database(from_store, to_store)?;
            // The source and its node are checked before a new database is created.
            // (A source that is this database must exist already: nothing is created to fail.)
            let opened =
                if same && Path::new(path).exists() { None } else { Some(source_node(from_store, from_node)?) };
            let mut builder = Database::builder();
            builder.backend(backend);
            let database = builder.create(path)?;
            match opened {
                None => {
                    let source = locator::read_at(&database, locator::split_version(from_store).1)?;
                    database.copy_from(source, from_node, &options)?
                }
                Some(opened) => database.copy_from(opened.store.clone(), from_node, &options)?,
            }
        }
        (kind @ (Kind::Directory | Kind::Object), path) => {
            let opened = source_node(from_store, from_node)?;
            let destination: std::sync::Arc<dyn zarrdb::Store> = if kind == Kind::Directory {
                let folder = zarrdb::DirectoryStore::create(path)?;
                locator::refuse_older_layouts(path, &folder)?;
                std::sync::Arc::new(folder)
            } else {
                std::sync::Arc::new(zarrdb::store::ObjectStore::open(path)?)
            };
            // Chunks first, metadata documents last: a reader never finds a document whose
            // chunks are still missing.
            let report = zarrdb::transfer::copy_node(opened.store.clone(), from_node, destination.clone(), &options)?;
            // The destination's root may hold consolidated metadata that does not list the copy yet.
            locator::refresh_consolidated(destination.as_ref())?;
            report
        }
        (Kind::Zip, path) => {
            progress::finish(bar);
            return to_zip(from_store, from_node, path, to_node, as_json);
        }
    };
    progress::finish(bar);
    if as_json {
        return outln!(
            "{}",
            serde_json::to_string_pretty(&super::transfer::report_json(&report, source, destination, to_node))?
        );
    }
    outln!(
        "copied {from_node} of {from_store} to {to_node} of {to_store}: {} nodes, {} chunks, {} bytes",
        report.nodes,
        report.chunks,
        report.bytes
    )
}

/// `cp --history`: the whole of one database that keeps history into another, every version,
/// tag and branch (`Database::mirror_into`); the destination is created, keeping history, when
/// missing.
pub(crate) fn mirror(source: &str, destination: &str, as_json: bool) -> CliResult {
    for (locator, role) in [(source, "from"), (destination, "to")] {
        if split(locator)?.1 != "/" || locator::split_version(locator).1.is_some() {
            return Err(CliError::new(format!(
                "cp --history {role} \"{locator}\": a whole database is mirrored, with every version (no :/NODE or @VERSION)"
            )));
        }
    }
    let (from_backend, from) = locator::database(source, "cp --history from")?;
    let (to_backend, to) = locator::database(destination, "cp --history to")?;
    if locator::same_database(source, destination)? {
        return Err(CliError::new(format!("cp --history: \"{source}\" and \"{destination}\" are one database")));
    }
    let mut builder = Database::builder();
    let from_db = builder.backend(from_backend).read_only(true).open(from)?;
    let mut builder = Database::builder();
    let to_db = builder.backend(to_backend).history(true).create(to)?;
    let mirrored = from_db.mirror_into(&to_db)?;
    if as_json {
        let report = serde_json::json!({
            "source": source,
            "destination": destination,
            "commits": mirrored.commits,
            "keys_written": mirrored.keys_written,
            "bytes_written": mirrored.bytes_written,
            "keys_removed": mirrored.keys_removed,
        });
        return outln!("{}", serde_json::to_string_pretty(&report)?);
    }
    outln!(
        "mirrored the history of {source} into {destination}: {} new commits, {} keys ({} bytes) written, {} removed",
        mirrored.commits,
        mirrored.keys_written,
        mirrored.bytes_written,
        mirrored.keys_removed
    )
}

/// The source store, opened for reading, once its node is known to be there.
fn source_node(store: &str, node: &str) -> Result<locator::Opened, CliError> {
    let opened = locator::open(store)?;
    zarrdb::Node::open(opened.store.clone(), node)?;
    Ok(opened)
}

/// A new zip archive holds a database's node as its root (what `export` writes).
fn to_zip(source: &str, node: &str, path: &str, to_node: &str, as_json: bool) -> CliResult {
    let (Kind::Database(backend), from) = locator::parse(source)? else {
        return Err(CliError::new(format!(
            "cp to the zip archive {path}: only from a database (import a folder or archive into one first)"
        )));
    };
    if to_node != "/" {
        return Err(CliError::new(format!(
            "cp to the zip archive {path}: a new archive gets the node as its root, not at {to_node}"
        )));
    }
    let database = Database::builder().backend(backend).read_only(true).open(from)?;
    let report = database.export(Path::new(path), &ExportOptions::default().node(node).zip(true))?;
    if as_json {
        return outln!("{}", serde_json::to_string_pretty(&super::transfer::export_json(&report, source, path, node))?);
    }
    outln!("copied {node} of {source} to {path}: {} values, {} bytes", report.values, report.bytes)
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn nodes_follow_the_last_colon_slash() {
        let ok = |t| split(t).ok().unwrap();
        assert_eq!(ok("data.zarrdb:/grid/t"), ("data.zarrdb", "/grid/t"));
        assert_eq!(ok("data.zarrdb"), ("data.zarrdb", "/"));
        assert_eq!(ok("lmdb:/srv/env"), ("lmdb:/srv/env", "/"));
        assert_eq!(ok("lmdb:/srv/env:/a"), ("lmdb:/srv/env", "/a"));
        assert_eq!(ok("dir:out:/"), ("dir:out", "/"));
        assert_eq!(ok("/abs/x.zip:/n"), ("/abs/x.zip", "/n"));
        assert_eq!(ok("/tmp/odd:x/y.zarrdb"), ("/tmp/odd:x/y.zarrdb", "/"));
        assert!(split("/tmp/b.zarrdb:grid").is_err());
        assert!(split("b.zarrdb:grid").is_err());
        assert!(split("lmdb:env:grid").is_err());
    }
}
