//! Commits that may lose a race (a bucket database, `KvEngine::commits_race`): another writer can
//! move the head between a transaction's first read and its commit, and the engine then refuses
//! the commit with [`StoreError::HeadMoved`]. A transaction records what it read; when the same
//! reads against the new head give the same answers, committing the same changes there is what a
//! serial order would have done, so it commits again (a rebase); otherwise it fails with
//! [`TransactionError::Conflict`] naming the first key whose answer changed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::error::{Error, StoreError, TransactionError};
use crate::store::kv::KvSnapshot;
use crate::store::ByteRange;

/// How long a commit that keeps losing races is tried again before the caller gets the error
/// (it is tried at least [`MIN_TRIES`] times): with many writers on one head, a writer may lose
/// many times in a row, and each loss costs it only a pause and a new try.
const RETRY_FOR: Duration = Duration::from_secs(60);
const MIN_TRIES: u32 = 64;

/// Whether `result` is a commit that lost a race.
pub(super) fn lost(result: &Result<(), Error>) -> bool {
    matches!(result, Err(Error::Store(StoreError::HeadMoved { .. })))
}

/// The tries of one commit that may lose races.
pub(super) struct Retry {
    began: Instant,
    attempt: u32,
}

impl Retry {
    pub fn new() -> Retry {
        Retry { began: Instant::now(), attempt: 0 }
    }

    /// After a lost race: wait (randomized and growing, so racing writers spread out) and say
    /// whether to try again.
    pub fn again(&mut self) -> bool {
        use std::hash::{BuildHasher, Hasher};
        if self.attempt >= MIN_TRIES && self.began.elapsed() >= RETRY_FOR {
            return false;
        }
        self.attempt += 1;
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(self.attempt);
        let ceiling_us = 1_000u64 << self.attempt.min(8);
        std::thread::sleep(Duration::from_micros(hasher.finish() % ceiling_us));
        true
    }
}

/// One read a transaction made, and what it answered where the answer is not a value.
enum Read {
    /// The value (or its absence) under a key.
    Value(String),
    /// `next_key(from, within)`.
    Next { from: String, within: String, found: Option<String> },
    /// `keys(prefix)`.
    Keys { prefix: String, found: Vec<String> },
}

/// A snapshot that records every read made through it.
pub(super) struct Recorded {
    inner: Arc<dyn KvSnapshot>,
    reads: Mutex<Vec<Read>>,
}

impl Recorded {
    pub fn new(inner: Arc<dyn KvSnapshot>) -> Arc<Recorded> {
        Arc::new(Recorded { inner, reads: Mutex::new(Vec::new()) })
    }

    fn note(&self, read: Read) {
        self.reads.lock().push(read);
    }

    /// The first key whose read answers differently in `now`, if any.
    pub fn changed_in(&self, now: &dyn KvSnapshot) -> Result<Option<String>, StoreError> {
        let reads = self.reads.lock();
        let mut seen = std::collections::HashSet::new();
        for read in reads.iter() {
            match read {
                Read::Value(key) => {
                    if seen.insert(key.as_str()) && self.inner.value_token(key)? != now.value_token(key)? {
                        return Ok(Some(key.clone()));
                    }
                }
                Read::Next { from, within, found } => {
                    if now.next_key(from, within)? != *found {
                        return Ok(Some(found.clone().unwrap_or_else(|| from.clone())));
                    }
                }
                Read::Keys { prefix, found } => {
                    if now.keys(prefix)? != *found {
                        return Ok(Some(prefix.clone()));
                    }
                }
            }
        }
        Ok(None)
    }
}

impl KvSnapshot for Recorded {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.note(Read::Value(key.to_owned()));
        self.inner.get(key)
    }

    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        self.note(Read::Value(key.to_owned()));
        self.inner.get_range(key, range)
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        self.note(Read::Value(key.to_owned()));
        self.inner.size(key)
    }

    fn with_value(&self, key: &str, read: &mut dyn FnMut(&[u8])) -> Result<bool, StoreError> {
        self.note(Read::Value(key.to_owned()));
        self.inner.with_value(key, read)
    }

    fn with_value_within(&self, key: &str, limit: u64, read: &mut dyn FnMut(&[u8])) -> Result<Option<u64>, StoreError> {
        self.note(Read::Value(key.to_owned()));
        self.inner.with_value_within(key, limit, read)
    }

    fn value_token(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.value_token(key)
    }

    fn next_key(&self, from: &str, within: &str) -> Result<Option<String>, StoreError> {
        let found = self.inner.next_key(from, within)?;
        self.note(Read::Next { from: from.to_owned(), within: within.to_owned(), found: found.clone() });
        Ok(found)
    }

    fn keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let found = self.inner.keys(prefix)?;
        self.note(Read::Keys { prefix: prefix.to_owned(), found: found.clone() });
        Ok(found)
    }
}

/// The conflict a transaction reports when a read of `key` changed under it.
pub(super) fn conflict(key: String) -> Error {
    TransactionError::Conflict { key }.into()
}
