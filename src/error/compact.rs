//! Why compacting a database failed.

/// [`crate::Database::compact`] failed. Whatever the cause, the database holds exactly what it
/// held before: a compaction only moves data, each step in a commit of its own.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompactError {
    /// The database is in use where a compaction cannot work around it: in a redb database
    /// opened in multi-writer mode, a [`crate::Snapshot`] or a transaction of another process
    /// (pages cannot move, and a copy cannot replace a file other processes may hold); in an
    /// LMDB database, a snapshot of this process or another process with it open (its file is
    /// replaced by a compacted copy). Nothing was moved; try again when it has ended.
    #[error("cannot compact \"{database}\" now: {holder} is open; nothing was changed")]
    InUse {
        /// The database's path.
        database: String,
        /// What holds it ("a read snapshot or transaction", "another process").
        holder: &'static str,
    },
    /// The database was opened read-only.
    #[error("cannot compact \"{database}\": it was opened read-only")]
    ReadOnly {
        /// The database's path.
        database: String,
    },
    /// The engine has no way to give space back (sled reclaims space by itself as it runs).
    #[error("cannot compact \"{database}\": {backend} does not support compaction ({why})")]
    Unsupported {
        /// The database's path.
        database: String,
        /// The backend.
        backend: &'static str,
        /// What the backend does instead.
        why: &'static str,
    },
    /// The engine failed while compacting (an I/O error, a full disk). Every step that completed
    /// was a commit; the database is intact and holds all its data.
    #[error("compacting \"{database}\" failed: {source}")]
    Engine {
        /// The database's path.
        database: String,
        /// The engine's error.
        #[source]
        source: super::StoreError,
    },
}
