//! redb's side of the commit log (`store/log/`): where redb keeps the log's position (under
//! [`APPLIED_KEY`] in its table, stored by each commit applied from the log) and the log's name
//! (under [`NAME_KEY`]), and the replay of the records a reopened file lacks.

use std::path::Path;

use redb::{ReadableDatabase, ReadableTable};

use super::tables::{Tables, TABLE};
use super::{durability, NAME};
use crate::error::StoreError;
use crate::store::kv::engine_error;
use crate::store::log::{
    self as commit_log, Applied, Found, LogName, Place, Position, Replayed, APPLIED_KEY, NAME_KEY,
};

/// Where a database's log is looked for.
pub(super) enum LogAt<'a> {
    /// Beside the database's file at this path, by the name the database stores (or, for a
    /// database of a build before, by the name of the path given and of the canonical path).
    File(&'a Path),
    /// On a simulated disk (the fault-injection tests).
    #[cfg_attr(not(test), expect(dead_code, reason = "the fault injection tests give a simulated disk"))]
    Given(&'a Place),
}

/// What [`APPLIED_KEY`] and [`NAME_KEY`] hold in `table`; `None` when the database has never
/// used a log (or a build before named none).
pub(super) fn read_position(
    table: &impl ReadableTable<&'static [u8], &'static [u8]>,
) -> Result<(Option<Applied>, Option<LogName>), StoreError> {
    let damaged = |key: &str| {
        let key = key.to_owned();
        move |what| StoreError::Damaged { backend: NAME, operation: "open", key, what }
    };
    let applied = match table.get(APPLIED_KEY.as_bytes()).map_err(engine_error(NAME, "get", APPLIED_KEY))? {
        Some(value) => Some(Applied::from_bytes(value.value()).map_err(damaged(APPLIED_KEY))?),
        None => None,
    };
    let name = match table.get(NAME_KEY.as_bytes()).map_err(engine_error(NAME, "get", NAME_KEY))? {
        Some(value) => Some(LogName::from_bytes(value.value()).map_err(damaged(NAME_KEY))?),
        None => None,
    };
    Ok((applied, name))
}

/// Store `position` in `table` (`operation` names it in errors).
pub(super) fn store_position(
    position: &Position,
    table: &mut redb::Table<&[u8], &[u8]>,
    operation: &'static str,
) -> Result<(), StoreError> {
    let bytes = position.applied.to_bytes();
    table.insert(APPLIED_KEY.as_bytes(), bytes.as_slice()).map_err(engine_error(NAME, operation, APPLIED_KEY))?;
    if let Some(name) = &position.name {
        let bytes = name.to_bytes();
        table.insert(NAME_KEY.as_bytes(), bytes.as_slice()).map_err(engine_error(NAME, operation, NAME_KEY))?;
    }
    Ok(())
}

/// Apply the records of the database's log that `db`'s latest commit does not hold, in order, in
/// one commit: `durable` (redb's multi-writer mode, where other processes read the file), or
/// without a sync, so that a database opens on a full disk too: the records stay in the log until
/// a durable commit holds them. Records numbered above `limit` are left: when the handle opens
/// the file again, a commit of this process may be writing its record, not yet applied. Returns
/// the log found too (opened for writing when `writable`), for the engine to go on in.
pub(super) fn replay(
    db: &redb::Database,
    at: LogAt<'_>,
    durable: bool,
    limit: u64,
    writable: bool,
) -> Result<(Replayed, Option<Found>), StoreError> {
    // Read first: a write transaction can fail where reading does not (a full disk), and most
    // opens find nothing to apply.
    let (nothing, found) = look(db, at, limit, writable)?;
    let Some((found, newer)) = found else { return Ok((nothing, None)) };
    if !newer {
        return Ok((nothing, Some(found)));
    }
    let name = nothing.name.clone();
    let mut txn = db.begin_write().map_err(engine_error(NAME, "replay the commit log", ""))?;
    let replayed = {
        let mut tables = Tables::open(&txn)?;
        // Another process of redb's multi-writer mode may have applied them meanwhile.
        let (Some(applied), _) = read_position(&tables.main)? else { return Ok((nothing, Some(found))) };
        let (last, end) = found.follow(NAME, applied, limit, |batch| {
            tables.write_batch(&batch)?;
            Ok(true)
        })?;
        let position = Position { applied: Applied { seq: last, ..applied }, name: None };
        store_position(&position, &mut tables.main, "replay the commit log")?;
        let stored = Some(if durable { position.applied } else { applied });
        Replayed { stored, name, last, end }
    };
    txn.set_durability(durability(durable)).map_err(engine_error(NAME, "set_durability", ""))?;
    txn.commit().map_err(engine_error(NAME, "replay the commit log", ""))?;
    Ok((replayed, Some(found)))
}

/// Where the file stands, read in a read transaction, and the log found for it (opened for
/// writing when `writable`) with whether it holds records numbered up to `limit` that the file
/// lacks.
fn look(
    db: &impl ReadableDatabase,
    at: LogAt<'_>,
    limit: u64,
    writable: bool,
) -> Result<(Replayed, Option<(Found, bool)>), StoreError> {
    let (nothing, found) = find_log(db, at, writable)?;
    // A database that never used a log holds none of any log's records.
    let (Some(found), Some(applied)) = (found, nothing.stored) else { return Ok((nothing, None)) };
    let newer = has_records(&found, applied, limit)?;
    Ok((nothing, Some((found, newer))))
}

/// Whether `found` holds records after `applied` numbered up to `limit`.
pub(super) fn has_records(found: &Found, applied: Applied, limit: u64) -> Result<bool, StoreError> {
    let mut newer = false;
    found.follow(NAME, applied, limit, |_| {
        newer = true;
        Ok(false)
    })?;
    Ok(newer)
}

/// Where the file stands, read in a read transaction, and the log found for it (opened for
/// writing when `writable`), its records not read: in the multi-writer mode other processes
/// may be appending to it and starting it again.
pub(super) fn find_log(
    db: &impl ReadableDatabase,
    at: LogAt<'_>,
    writable: bool,
) -> Result<(Replayed, Option<Found>), StoreError> {
    let (stored, name) = {
        let txn = db.begin_read().map_err(engine_error(NAME, "replay the commit log", ""))?;
        match txn.open_table(TABLE) {
            Ok(table) => read_position(&table)?,
            Err(redb::TableError::TableDoesNotExist(_)) => (None, None),
            Err(e) => return Err(engine_error(NAME, "open_table", "")(e)),
        }
    };
    let nothing = Replayed { stored, name: name.clone(), last: stored.map_or(0, |a| a.seq), end: 0 };
    let found = match at {
        LogAt::File(path) => {
            let default = commit_log::default_log(path);
            let legacy = [commit_log::log_path(path), default.clone()];
            let inode = commit_log::inode_of(path);
            commit_log::find(NAME, stored, name.as_ref(), inode, &default, &legacy, writable)?
        }
        LogAt::Given(place) => stored.and_then(|_| Found::given(place)),
    };
    Ok((nothing, found))
}
