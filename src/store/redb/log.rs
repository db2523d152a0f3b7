//! redb's side of the commit log (`store/log/`): where redb keeps the log's position (under
//! [`APPLIED_KEY`] in its table, stored by each commit applied from the log), and the replay of
//! the records a reopened file lacks.

use redb::{ReadableDatabase, ReadableTable};

use super::{durability, write_batch, NAME, TABLE};
use crate::error::StoreError;
use crate::store::kv::engine_error;
use crate::store::log::{follow, read_error, Applied, Place, Replayed, APPLIED_KEY};

/// What [`APPLIED_KEY`] holds in `table`; `None` when the database has never used a log.
fn read_applied(table: &impl ReadableTable<&'static [u8], &'static [u8]>) -> Result<Option<Applied>, StoreError> {
    let Some(value) = table.get(APPLIED_KEY.as_bytes()).map_err(engine_error(NAME, "get", APPLIED_KEY))? else {
        return Ok(None);
    };
    Applied::from_bytes(value.value()).map(Some).map_err(|what| StoreError::Damaged {
        backend: NAME,
        operation: "open",
        key: APPLIED_KEY.to_owned(),
        what,
    })
}

/// Store `applied` under [`APPLIED_KEY`] in `table` (`operation` names it in errors).
pub(super) fn store_applied(
    applied: Applied,
    table: &mut redb::Table<&[u8], &[u8]>,
    operation: &'static str,
) -> Result<(), StoreError> {
    table.insert(APPLIED_KEY.as_bytes(), applied.to_bytes().as_slice()).map_err(engine_error(
        NAME,
        operation,
        APPLIED_KEY,
    ))?;
    Ok(())
}

/// Apply the records of the log at `path` that `db`'s latest commit does not hold, in order, in
/// one commit: `durable` (redb's multi-writer mode, where other processes read the file), or
/// without a sync, so that a database opens on a full disk too: the records stay in the log until
/// a durable commit holds them. Records numbered above `limit` are left: when the handle opens
/// the file again, a commit of this process may be writing its record, not yet applied.
pub(super) fn replay(db: &redb::Database, place: &Place, durable: bool, limit: u64) -> Result<Replayed, StoreError> {
    let file = place.open_existing().map_err(|e| read_error(NAME, place, e))?;
    // Read first: a write transaction can fail where reading does not (a full disk), and most
    // opens find nothing to apply.
    let stored = {
        let txn = db.begin_read().map_err(engine_error(NAME, "replay the commit log", ""))?;
        match txn.open_table(TABLE) {
            Ok(table) => read_applied(&table)?,
            Err(redb::TableError::TableDoesNotExist(_)) => None,
            Err(e) => return Err(engine_error(NAME, "open_table", "")(e)),
        }
    };
    // A database that never used a log holds none of any log's records: a log beside it was left
    // by a file since replaced, and is not its own.
    let nothing = Replayed { stored, last: stored.map_or(0, |a| a.seq), end: 0 };
    let (Some(file), Some(applied)) = (file, stored) else { return Ok(nothing) };
    let mut newer = false;
    follow(NAME, place, file.as_ref(), applied, limit, |_| {
        newer = true;
        Ok(false)
    })?;
    if !newer {
        return Ok(nothing);
    }
    let mut txn = db.begin_write().map_err(engine_error(NAME, "replay the commit log", ""))?;
    let replayed = {
        let mut table = txn.open_table(TABLE).map_err(engine_error(NAME, "open_table", ""))?;
        // Another process of redb's multi-writer mode may have applied them meanwhile.
        let Some(applied) = read_applied(&table)? else { return Ok(nothing) };
        let (last, end) = follow(NAME, place, file.as_ref(), applied, limit, |batch| {
            write_batch(&mut table, &batch)?;
            Ok(true)
        })?;
        store_applied(Applied { seq: last, ..applied }, &mut table, "replay the commit log")?;
        Replayed { stored: Some(if durable { Applied { seq: last, ..applied } } else { applied }), last, end }
    };
    txn.set_durability(durability(durable)).map_err(engine_error(NAME, "set_durability", ""))?;
    txn.commit().map_err(engine_error(NAME, "replay the commit log", ""))?;
    Ok(replayed)
}
