//! `zarrdb compact DATABASE`: give the space of erased and overwritten data back to the file
//! system (`Database::compact`), and print the sizes before and after.

use zarrdb::Database;

use super::{locator, progress, CliResult};

pub(crate) fn run(database: &str, older_than: Option<u64>, json: bool) -> CliResult {
    let (backend, path) = locator::database(database, "compact")?;
    // Nothing there: `OpenError::NotFound` ("no database at ...").
    let db = Database::builder().backend(backend).open(path)?;
    let spinner = progress::spinner("compact");
    let done = match older_than {
        Some(seconds) => db.compact_older_than(std::time::Duration::from_secs(seconds)),
        None => db.compact(),
    };
    progress::finish(spinner);
    let done = done?;
    drop(db);
    // The length that stays is the one after the database is closed: closing writes too (redb
    // saves its allocator state then), so the length right after compacting is not it.
    let bytes_after = length_on_disk(std::path::Path::new(&path)).unwrap_or(done.bytes_after);
    let mb = |bytes: u64| (bytes as f64 / 1e4).round() / 100.0;
    if json {
        let report = serde_json::json!({
            "database": path,
            "backend": backend.name(),
            "bytes_before": done.bytes_before,
            "bytes_after": bytes_after,
        });
        outln!("{report}")?;
    } else {
        outln!("compacted {path}: {} MB -> {} MB", mb(done.bytes_before), mb(bytes_after))?;
    }
    Ok(())
}

/// The length of the database file, or the sum over the files of its folder (LMDB, sled).
fn length_on_disk(path: &std::path::Path) -> Option<u64> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_dir() {
        return Some(meta.len());
    }
    let files = std::fs::read_dir(path).ok()?.flatten().filter_map(|e| e.metadata().ok()).filter(|m| m.is_file());
    Some(files.map(|m| m.len()).sum())
}
