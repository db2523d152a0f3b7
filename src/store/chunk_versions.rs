//! Chunk versions: the one home of chunk-conflict detection. Each chunk key hashes to one of
//! [`STRIPES`] version counters; a read-modify-write of a chunk notes its stripe's version before
//! reading and stores only if it is unchanged (the array layer's `chunk_sync.rs`), and a database
//! commit bumps the versions of the chunks it wrote once they are visible (`db`), so writes that
//! read the old values retry instead of losing an update. Chunks that share a stripe (or the same
//! key in two stores) cause a needless retry now and then, never a lost update.
//!
//! The counters are process-wide: every store of the process shares them, so two handles on one
//! folder or one database file protect each other's writes.

use std::hash::{Hash, Hasher};

use parking_lot::{Mutex, MutexGuard};

/// Version counters: enough that eight writers on distinct chunks rarely share one.
pub(crate) const STRIPES: usize = 4096;

static VERSIONS: [Mutex<u64>; STRIPES] = [const { Mutex::new(0) }; STRIPES];

/// The current version of chunk `key`'s stripe.
pub(crate) fn current(key: &str) -> u64 {
    *VERSIONS[stripe(key)].lock()
}

/// The stripe of chunk `key`, locked: a store made under it and a bump of the guard's version are
/// one step for every other writer of the stripe.
pub(crate) fn lock(key: &str) -> MutexGuard<'static, u64> {
    VERSIONS[stripe(key)].lock()
}

/// Bump the versions of `keys` once their new values are visible to readers: a database commit
/// calls this after the engine applied its batch, so that read-modify-writes which read the old
/// values fail their validation and retry.
pub(crate) fn bump<'a>(keys: impl IntoIterator<Item = &'a str>) {
    for key in keys {
        bump_stripe(stripe(key));
    }
}

fn bump_stripe(stripe: usize) {
    let mut version = VERSIONS[stripe].lock();
    *version = version.wrapping_add(1);
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

    /// Bump every stripe noted, once the writes are visible (as [`bump`] does per key).
    pub(crate) fn bump(self) {
        for (stripe, _) in self.0.iter().enumerate().filter(|(_, touched)| **touched) {
            bump_stripe(stripe);
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
