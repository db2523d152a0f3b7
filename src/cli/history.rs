//! `zarrdb log DATABASE` and `zarrdb tag DATABASE NAME`: the history of a database that keeps
//! one (`DatabaseBuilder::history`).

use std::time::UNIX_EPOCH;

use zarrdb::db::VersionRef;
use zarrdb::Database;

use super::{locator, CliResult};

pub(crate) fn log(database: &str, json: bool) -> CliResult {
    let (backend, path) = locator::database(database, "log")?;
    let db = Database::builder().backend(backend).read_only(true).open(path)?;
    let tags = db.tags()?;
    for commit in db.log()? {
        let us = commit.time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros());
        let named: Vec<&str> = tags.iter().filter(|(_, id)| *id == commit.id).map(|(n, _)| n.as_str()).collect();
        if json {
            let line = serde_json::json!({
                "id": commit.id.to_string(),
                "parent": commit.parent.map(|p| p.to_string()),
                "time_us": us as u64,
                "message": commit.message,
                "author": commit.author,
                "changes": commit.changes,
                "bytes_written": commit.bytes,
                "tags": named,
            });
            outln!("{line}")?;
        } else {
            let tags = if named.is_empty() { String::new() } else { format!(" ({})", named.join(", ")) };
            let seconds = us / 1_000_000;
            outln!(
                "{} {}.{:06}s {} changes, {} bytes{tags}  {}",
                commit.id,
                seconds,
                us % 1_000_000,
                commit.changes,
                commit.bytes,
                commit.message.escape_debug()
            )?;
        }
    }
    Ok(())
}

pub(crate) fn tag(database: &str, name: &str, at: &str, delete: bool) -> CliResult {
    let (backend, path) = locator::database(database, "tag")?;
    let db = Database::builder().backend(backend).open(path)?;
    if delete {
        db.delete_tag(name)?;
        outln!("deleted tag {}", name.escape_debug())?;
    } else {
        let id = db.tag(name, &VersionRef::named(at))?;
        outln!("tagged {id} as {}", name.escape_debug())?;
    }
    Ok(())
}
