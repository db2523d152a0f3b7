//! `zarrdb log`, `tag`, `branch`, `merge`, `reset`, `restore`, `expire` and `gc`: the history of
//! a database that keeps one (`DatabaseBuilder::history`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use zarrdb::db::{MergeOutcome, VersionRef};
use zarrdb::Database;

use super::{locator, CliError, CliResult};

pub(crate) fn log(database: &str, branch: &str, json: bool) -> CliResult {
    let (backend, path) = locator::database(database, "log")?;
    let db = Database::builder().backend(backend).read_only(true).open(path)?;
    let tags = db.tags()?;
    let db = if branch == "main" { db } else { db.on_branch(branch)? };
    for commit in db.log()? {
        let us = commit.time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros());
        let named: Vec<&str> = tags.iter().filter(|(_, id)| *id == commit.id).map(|(n, _)| n.as_str()).collect();
        if json {
            let line = serde_json::json!({
                "id": commit.id.to_string(),
                "parent": commit.parent.map(|p| p.to_string()),
                "merged": commit.merged.map(|m| m.to_string()),
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

pub(crate) fn branch(database: &str, name: Option<&str>, at: &str, delete: bool, json: bool) -> CliResult {
    let (backend, path) = locator::database(database, "branch")?;
    let db = Database::builder().backend(backend).read_only(name.is_none()).open(path)?;
    match name {
        None => {
            for (name, head) in db.branches()? {
                match json {
                    true => outln!("{}", serde_json::json!({ "name": name, "head": head.to_string() }))?,
                    false => outln!("{head} {}", name.escape_debug())?,
                }
            }
        }
        Some(name) if delete => {
            db.delete_branch(name)?;
            outln!("deleted branch {}", name.escape_debug())?;
        }
        Some(name) => {
            let head = db.create_branch(name, &VersionRef::named(at))?;
            outln!("branch {} starts at {head}", name.escape_debug())?;
        }
    }
    Ok(())
}

pub(crate) fn merge(database: &str, from: &str, into: &str, message: Option<&str>) -> CliResult {
    let (backend, path) = locator::database(database, "merge")?;
    let db = Database::builder().backend(backend).open(path)?;
    let message = message.map_or_else(|| format!("merge {from} into {into}"), str::to_owned);
    match db.merge(&VersionRef::named(from), into, &message)? {
        MergeOutcome::UpToDate(head) => outln!("{} is up to date at {head}", into.escape_debug())?,
        MergeOutcome::FastForward(head) => outln!("fast-forwarded {} to {head}", into.escape_debug())?,
        MergeOutcome::Merged(head) => outln!("merged into {} as {head}", into.escape_debug())?,
        other => outln!("{} is at {}", into.escape_debug(), other.head())?,
    }
    Ok(())
}

pub(crate) fn reset(database: &str, branch: &str, to: &str) -> CliResult {
    let (backend, path) = locator::database(database, "reset")?;
    let db = Database::builder().backend(backend).open(path)?;
    let head = db.reset(branch, &VersionRef::named(to))?;
    outln!("{} is at {head}", branch.escape_debug())?;
    Ok(())
}

pub(crate) fn restore(database: &str, node: &str, to: &str, branch: &str) -> CliResult {
    let (backend, path) = locator::database(database, "restore")?;
    let db = Database::builder().backend(backend).open(path)?;
    let db = if branch == "main" { db } else { db.on_branch(branch)? };
    let head = db.restore(node, &VersionRef::named(to))?;
    outln!("{} holds {} again: {} is at {}", node.escape_debug(), to.escape_debug(), branch.escape_debug(), head.id)?;
    Ok(())
}

/// A duration as `--older-than` takes it: a whole number and a unit (s, m, h, d).
fn parse_age(text: &str) -> Option<Duration> {
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return None,
    };
    number.parse::<u64>().ok()?.checked_mul(seconds).map(Duration::from_secs)
}

pub(crate) fn expire(database: &str, keep: Option<&str>, older_than: Option<&str>) -> CliResult {
    let (backend, path) = locator::database(database, "expire")?;
    let keep = match (keep, older_than) {
        (Some(version), _) => VersionRef::named(version),
        (None, Some(age)) => {
            let age = parse_age(age).ok_or_else(|| {
                CliError::new(format!(
                    "expire: --older-than {}: give a whole number and a unit, s, m, h or d (30d)",
                    age.escape_debug()
                ))
            })?;
            VersionRef::AsOf(SystemTime::now().checked_sub(age).unwrap_or(UNIX_EPOCH))
        }
        (None, None) => return Err(CliError::new("expire: give --keep VERSION or --older-than AGE")),
    };
    let db = Database::builder().backend(backend).open(path)?;
    match db.expire(&keep)? {
        Some(horizon) => {
            outln!("versions older than {horizon} expire unless tagged; zarrdb gc frees what only they read")?
        }
        None => outln!("no version is that old: none expires")?,
    }
    Ok(())
}

pub(crate) fn gc(database: &str, json: bool) -> CliResult {
    let (backend, path) = locator::database(database, "gc")?;
    let db = Database::builder().backend(backend).open(path)?;
    let freed = db.collect()?;
    if json {
        let line =
            serde_json::json!({ "versions": freed.versions, "values": freed.values, "freed_bytes": freed.bytes });
        outln!("{line}")?;
    } else {
        outln!("freed {} values ({} bytes) of {} expired versions", freed.values, freed.bytes, freed.versions)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages() {
        assert_eq!(parse_age("30d"), Some(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_age("90s"), Some(Duration::from_secs(90)));
        for bad in ["", "d", "30", "30x", "-1d", "1.5h", "99999999999999999999d"] {
            assert_eq!(parse_age(bad), None, "{bad}");
        }
    }
}
