//! `zarrdb compact DATABASE`: give the space of erased and overwritten data back to the file
//! system (`Database::compact`), and print the sizes before and after.

use zarrdb::Database;

use super::{locator, progress, CliResult};

pub(crate) fn run(database: &str, json: bool) -> CliResult {
    let (backend, path) = locator::database(database, "compact")?;
    // Nothing there: `OpenError::NotFound` ("no database at ...").
    let db = Database::builder().backend(backend).open(path)?;
    let spinner = progress::spinner("compact");
    let done = db.compact();
    progress::finish(spinner);
    let done = done?;
    drop(db);
    let mb = |bytes: u64| (bytes as f64 / 1e4).round() / 100.0;
    if json {
        let report = serde_json::json!({
            "database": path,
            "backend": backend.name(),
            "bytes_before": done.bytes_before,
            "bytes_after": done.bytes_after,
        });
        outln!("{report}")?;
    } else {
        outln!("compacted {path}: {} MB -> {} MB", mb(done.bytes_before), mb(done.bytes_after))?;
    }
    Ok(())
}
