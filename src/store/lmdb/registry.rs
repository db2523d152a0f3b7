//! The LMDB folders this process has open. LMDB's locks are `fcntl` locks, which never conflict
//! with the process's own, so a second handle of a folder cannot be told apart from the first by
//! locking: the commit log's recovery would write the saved meta pages under the first handle's
//! live map. So every handle registers its folder, and a second open of it is refused before
//! anything touches the files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

static OPEN: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// A folder registered as open; dropping it lets the folder be opened again.
pub(super) struct Registered(PathBuf);

impl Registered {
    /// Register `folder`; `None` when a handle of this process has it open.
    pub(super) fn new(folder: &Path) -> Option<Registered> {
        let key = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
        // Made only once inserted: a `Registered` dropped here would remove the first handle's
        // entry (and lock the set again inside this statement).
        let inserted = OPEN.lock().insert(key.clone());
        inserted.then(|| Registered(key))
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        OPEN.lock().remove(&self.0);
    }
}
