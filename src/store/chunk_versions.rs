//! Chunk versions: the one home of chunk-conflict detection. Each chunk key hashes to one of
//! [`STRIPES`] version counters; a read-modify-write of a chunk notes its stripe's version before
//! reading and stores only if it is unchanged (the array layer's `chunk_sync.rs`), and a database
//! commit bumps the versions of the chunks it wrote once they are visible (`db`), so writes that
//! read the old values retry instead of losing an update. Chunks that share a stripe (or the same
//! key in two stores) cause a needless retry now and then, never a lost update.
//!
//! Each database and each folder store has a table of its own, so writers of unrelated stores never
//! retry because of each other; every handle of the process on the same database file or folder
//! shares one table ([`ChunkVersions::of_location`]), so two handles on one store still protect
//! each other's writes.

use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::per_file::PerFile;

use parking_lot::{Mutex, MutexGuard};

/// Version counters per table: enough that eight writers on distinct chunks rarely share one.
pub(crate) const STRIPES: usize = 4096;

/// The chunk versions of one store: the counters that read-modify-writes of its chunks check and
/// that its commits bump (see [`Store::chunk_versions`](crate::Store::chunk_versions)). Opaque:
/// a store that wraps another hands out the wrapped store's table.
pub struct ChunkVersions {
    stripes: Box<[Mutex<u64>]>,
}

impl std::fmt::Debug for ChunkVersions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkVersions").field("stripes", &self.stripes.len()).finish_non_exhaustive()
    }
}

impl Default for ChunkVersions {
    fn default() -> ChunkVersions {
        ChunkVersions::new()
    }
}

impl ChunkVersions {
    /// A table of its own (a memory store's).
    pub(crate) fn new() -> ChunkVersions {
        ChunkVersions { stripes: (0..STRIPES).map(|_| Mutex::new(0)).collect() }
    }

    /// The table of the database file or store folder at `path`, shared by every store of the
    /// process on the same file or folder (however its path is spelled); a table of its own when
    /// `path` cannot be inspected.
    pub(crate) fn of_location(path: &Path) -> Arc<ChunkVersions> {
        static TABLES: PerFile<ChunkVersions> = PerFile::new();
        TABLES.of(path)
    }

    /// The table of stores that do not have one (stores outside this crate, read-only stores).
    pub(crate) fn process_wide() -> &'static ChunkVersions {
        static TABLE: OnceLock<ChunkVersions> = OnceLock::new();
        TABLE.get_or_init(ChunkVersions::new)
    }

    /// The current version of chunk `key`'s stripe.
    pub(crate) fn current(&self, key: &str) -> u64 {
        *self.stripes[stripe(key)].lock()
    }

    /// The stripe of chunk `key`, locked: a store made under it and a bump of the guard's version
    /// are one step for every other writer of the stripe.
    pub(crate) fn lock(&self, key: &str) -> MutexGuard<'_, u64> {
        self.stripes[stripe(key)].lock()
    }

    /// Bump the versions of `keys` once their new values are visible to readers: a database commit
    /// calls this after the engine applied its batch, so that read-modify-writes which read the old
    /// values fail their validation and retry.
    pub(crate) fn bump<'a>(&self, keys: impl IntoIterator<Item = &'a str>) {
        for key in keys {
            self.bump_stripe(stripe(key));
        }
    }

    /// Bump every version: a merge or reset moved a branch's head to another version, whose
    /// keys differ in ways not worth listing (a needless retry is harmless).
    pub(crate) fn bump_all(&self) {
        for stripe in 0..self.stripes.len() {
            self.bump_stripe(stripe);
        }
    }

    fn bump_stripe(&self, stripe: usize) {
        let mut version = self.stripes[stripe].lock();
        *version = version.wrapping_add(1);
    }
}

/// The version stripes a bulk write touched, in constant memory whatever the number of keys.
pub(crate) struct Touched(Vec<bool>);

impl Touched {
    pub(crate) fn new() -> Touched {
        Touched(vec![false; STRIPES])
    }

    /// Note that `key` is written.
    pub(crate) fn note(&mut self, key: &str) {
        self.0[stripe(key)] = true;
    }

    /// Bump every stripe noted in `versions`, once the writes are visible (as
    /// [`ChunkVersions::bump`] does per key).
    pub(crate) fn bump(self, versions: &ChunkVersions) {
        for (stripe, _) in self.0.iter().enumerate().filter(|(_, touched)| **touched) {
            versions.bump_stripe(stripe);
        }
    }
}

fn stripe(key: &str) -> usize {
    // Fixed keys: the same chunk key maps to the same stripe in every thread.
    let mut hasher = std::hash::DefaultHasher::new();
    key.hash(&mut hasher);
    (hasher.finish() % STRIPES as u64) as usize
}

/// What a key held when it was read: `None` when absent, else the value's length and a 64-bit
/// hash of it, to compare with what it holds later in the same process.
pub(crate) type Fingerprint = Option<(u64, u64)>;

/// The fingerprint of a stored value.
pub(crate) fn fingerprint(value: Option<&[u8]>) -> Fingerprint {
    value.map(|v| {
        let mut hasher = std::hash::DefaultHasher::new();
        v.hash(&mut hasher);
        (v.len() as u64, hasher.finish())
    })
}

#[cfg(test)]
mod tests {
    use super::ChunkVersions;

    #[test]
    fn stores_on_one_location_share_a_table_and_others_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        let first = ChunkVersions::of_location(&a);
        let again = ChunkVersions::of_location(&dir.path().join("b/../a"));
        let other = ChunkVersions::of_location(&b);
        first.bump(["x/c/0"]);
        assert_eq!(again.current("x/c/0"), 1, "the same folder, spelled differently, shares the table");
        assert_eq!(other.current("x/c/0"), 0, "another folder does not");
        drop((first, again));
        assert_eq!(ChunkVersions::of_location(&a).current("x/c/0"), 0, "a table goes with its last store");
    }
}
