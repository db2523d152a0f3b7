//! Why an operation on the history of a database failed.

/// An operation on the history of a database (its commits, tags and versions) failed; nothing
/// was changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// The database keeps no history (see [`crate::DatabaseBuilder::history`]).
    #[error("\"{database}\" keeps no history; a database keeps it when created with history on")]
    Off {
        /// The database's path.
        database: String,
    },
    /// History was asked for, and this database cannot start keeping it.
    #[error("\"{database}\" cannot start keeping history: {why}; copy it into a new database with history on")]
    CannotStart {
        /// The database's path.
        database: String,
        /// Why not.
        why: &'static str,
    },
    /// No tag, branch or commit of this name, or no commit as old as asked.
    #[error("\"{database}\" has no {reference}")]
    NotFound {
        /// The database's path.
        database: String,
        /// What was asked for: `tag "v1"`, `commit 000000000000002a`, ...
        reference: String,
    },
    /// The version has expired ([`crate::Database::expire`]): it is older than the expiry
    /// horizon and no tag names it.
    #[error("\"{database}\" no longer keeps the version of {reference}: it has expired")]
    Expired {
        /// The database's path.
        database: String,
        /// What was asked for: `commit 000000000000002a`, ...
        reference: String,
    },
    /// A tag of this name exists: a tag never moves.
    #[error("\"{database}\" has a tag \"{name}\" already; a tag never moves")]
    TagExists {
        /// The database's path.
        database: String,
        /// The tag.
        name: String,
    },
    /// A deleted tag had this name: a tag's name never names another commit.
    #[error("\"{database}\" had a tag \"{name}\", now deleted; its name is never given to another commit")]
    TagDeleted {
        /// The database's path.
        database: String,
        /// The tag.
        name: String,
    },
    /// A name that cannot be a tag or branch.
    #[error("\"{name}\" cannot name a tag or branch: {reason}")]
    InvalidName {
        /// The name given (escaped, at most 80 characters).
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A branch of this name exists, or a tag (or a deleted one) has the name: tags and
    /// branches share one set of names, so a name in a locator means one thing.
    #[error("\"{database}\" has a {what} \"{name}\" already")]
    NameTaken {
        /// The database's path.
        database: String,
        /// The name.
        name: String,
        /// What holds it: `branch`, `tag` or `deleted tag`.
        what: &'static str,
    },
    /// A merge would join versions that changed the same keys to different values: nothing was
    /// written. Resolve by writing the keys on one side (or resetting it), then merge again.
    #[error("merging {source_ref} into branch \"{into}\" of \"{database}\" conflicts at {count} key(s): {}", keys.join(", "))]
    MergeConflict {
        /// The database's path.
        database: String,
        /// The branch merged into.
        into: String,
        /// What was merged (`branch "dev"`, `commit 000000000000002a`, ...).
        source_ref: String,
        /// The keys both sides changed to different values, in key order (at most 100).
        keys: Vec<String>,
        /// How many keys conflict in all.
        count: usize,
    },
    /// A mirror ([`crate::Database::mirror_into`]) would lose commits: the target holds a
    /// commit the source does not (made there since the last mirror, or collected from the
    /// source since). Nothing was written.
    #[error(
        "\"{target}\" holds commit {commit:016x}, which \"{database}\" {why}: mirroring would lose it; \
         mirror the other way first, or into a new database"
    )]
    Diverged {
        /// The source's path.
        database: String,
        /// The target's path.
        target: String,
        /// The target's newest commit.
        commit: u64,
        /// What the source holds instead: `does not hold`, `holds another commit under that number`.
        why: &'static str,
    },
    /// A mirror whose source and target are one database.
    #[error("\"{database}\" cannot be mirrored into itself")]
    MirrorIntoItself {
        /// The database's path.
        database: String,
    },
    /// A commit id that is not one (16 hexadecimal digits).
    #[error("\"{given}\" is not a commit id (16 hexadecimal digits)")]
    InvalidCommitId {
        /// What was given (escaped, at most 80 characters).
        given: String,
    },
}
