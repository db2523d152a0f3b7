//! Creating a redb database so that its path never holds less than a whole database.
//!
//! redb creates its file in place: it sizes the file, writes a header of zeros, syncs, and only
//! then writes its magic bytes. A crash (or a kill) in between leaves a file of zeros at the
//! path, which no later `open` or `create` recognises ("an unknown file") and which had to be
//! removed by hand. So the database is created under a temporary name beside the path, its
//! format marker is committed durably, and only then is it linked to the path. The link fails
//! when something appeared at the path meanwhile (another creator won): the existing database is
//! then opened instead, as `create` does for a database that exists.
//!
//! A crash before the link leaves only the temporary file (`.NAME.zarrdb-creating.PID.N`); the
//! next creation of the same path removes those of processes that no longer run.

use std::path::Path;
use std::sync::Arc;

use super::format::check_format;
use super::open::{sniff, Found};
use super::open::{with_history, Opened};
use super::Backend;
use crate::error::{Error, OpenError};
use crate::store::{beside, RedbEngine, RedbOptions};

/// What a new database's name says it is before it is linked to its name (see
/// [`beside::unique_beside`]).
const CREATING: &str = "zarrdb-creating";

/// A redb database created at `at`, its format marker committed (`display` names it in errors).
/// With `history`, a new database keeps history from its first commit. Whether the database
/// keeps history (one another creator placed at `at` first may, or may not).
fn open_new(
    at: &Path,
    display: &str,
    options: RedbOptions,
    named: bool,
    history: bool,
) -> Result<(RedbEngine, bool), Error> {
    let engine = match named {
        true => RedbEngine::open(at, true, options)?,
        false => RedbEngine::open_unnamed(at, options)?,
    };
    let history = check_format(&engine, Backend::Redb, display, false, history)?;
    Ok((engine, history))
}

/// Create the redb database at `path` (where nothing, or an empty file, is), or open the one
/// another creator put there first. `reopen` opens an existing database at `path`.
pub(super) fn create_redb(
    path: &Path,
    options: RedbOptions,
    history: bool,
    reopen: impl FnOnce() -> Result<Opened, Error>,
) -> Result<Opened, Error> {
    let display = path.display().to_string();
    let io = |source| Error::from(OpenError::Io { path: display.clone(), source });
    if path.is_dir() {
        return Err(OpenError::WrongBackend { path: display, requested: "redb", found: "an empty directory" }.into());
    }
    // Creations of this name a killed process left before it linked them: redb files.
    beside::remove_abandoned(path, CREATING, crate::store::is_redb_file);
    let temp = beside::unique_beside(path, CREATING);
    // Made exclusively first (never a file or link that was there), then redb lays it out.
    let created = beside::create_new(&temp, 0o666).is_ok();
    let Some((mut engine, history)) =
        created.then(|| open_new(&temp, &display, options, false, history).ok()).flatten()
    else {
        // Whatever kept the temporary file from becoming a database (a folder without write
        // permission, a full disk) keeps the path from it too: creating there directly gives
        // the error under the name the caller knows.
        if created {
            let _ = std::fs::remove_file(&temp);
        }
        let (engine, history) = open_new(path, &display, options, true, history)?;
        return with_history(Arc::new(engine), history);
    };
    // An empty file at the path counts as nothing there (`sniff`): it is replaced. Otherwise a
    // hard link, which fails rather than replace what another creator put there.
    let placed = if sniff(path)? == Found::Nothing && path.is_file() {
        std::fs::rename(&temp, path)
    } else {
        std::fs::hard_link(&temp, path).and_then(|()| std::fs::remove_file(&temp))
    };
    match placed {
        Ok(()) => {
            engine.moved_to(path)?;
            // The new name is durable once the folder is; the file's content already is.
            beside::sync_folder(path).map_err(io)?;
            with_history(Arc::new(engine), history)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            drop(engine);
            let _ = std::fs::remove_file(&temp);
            reopen()
        }
        Err(e) => {
            drop(engine);
            let _ = std::fs::remove_file(&temp);
            Err(io(e))
        }
    }
}
