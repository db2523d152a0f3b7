//! Entry points for the fuzz targets in `fuzz/` to parsers that are not public. Not part of the
//! API: hidden from the documentation, and free to change with the targets.
//!
//! Here: the commit log's reader, the history records' decoders, and a closed database's engine
//! without the history layer (to damage history's records where they are stored). Everything
//! else the targets feed (metadata documents, codec chains, shards, zip archives, `.npy` files,
//! databases) goes through the public API.

pub use crate::store::log_fuzzing::{commit_log, commit_log_record};

use std::path::Path;
use std::sync::Arc;

use crate::db::Backend;
use crate::error::Error;
use crate::store::history::{Commit, HistoryEntry as Entry};
use crate::store::kv::{KvEngine, WriteBatch};
use crate::store::{LmdbEngine, RedbEngine, RedbOptions, SledEngine, SHARED_LOG_CAPACITY};

/// Decode `bytes` as each history record reachable from outside the history layer: an entry
/// alone, an entry and its inline value, a commit record. Panics when one that decodes does
/// not come back the same from its encoding; a decode may fail, never panic.
///
/// The records of a commit's changes, refs and the `meta` record have no entry point here
/// (their functions are private to `store::history`); a damaged database reaches them
/// ([`RawEngine`]).
pub fn history_records(bytes: &[u8]) {
    if let Ok(entry) = Entry::decode("k", bytes) {
        let again = entry.encode();
        assert_eq!(&again[..], bytes, "an entry that decodes is its own encoding");
        assert_eq!(Entry::decode("k", &again).expect("an encoded entry decodes"), entry);
    }
    if let Ok((entry, value)) = Entry::decode_head("k", bytes) {
        let again = [&entry.encode()[..], value].concat();
        assert_eq!(again, bytes, "an entry and its value that decode are their own encoding");
        let (entry2, value2) = Entry::decode_head("k", &again).expect("an encoded head decodes");
        assert_eq!((entry2, value2), (entry, value));
    }
    if let Ok((commit, changes)) = Commit::decode_with_changes("k", bytes) {
        let again = commit.encode_with(changes);
        let (decoded, changes_again) =
            Commit::decode_with_changes("k", &again).expect("an encoded commit record decodes");
        assert_eq!((&decoded, changes_again), (&commit, changes), "a commit record changed through its encoding");
        // A merge record (`ZHC2`) that merged commit 0 is written back as a plain one.
        if bytes.starts_with(b"ZHC1") || bytes.starts_with(b"ZHC3") || commit.merged != 0 {
            assert_eq!(again, bytes, "a commit record that decodes is its own encoding");
        }
        if let Some(changes) = changes {
            // The changes a record holds decode as a list beside it would: failing, not panicking.
            let _ = crate::store::history::decode_changes("k", changes, |_, _| ());
        }
    }
}

/// `body` followed by its CRC-32C, as history seals its records: a target that writes a record
/// of its own gets past the checksum to the fields.
pub fn seal(body: &[u8]) -> Vec<u8> {
    let mut out = body.to_vec();
    out.extend_from_slice(&crc32c::crc32c(body).to_le_bytes());
    out
}

/// The engine of a closed database, without the history layer or the format check: it reads
/// and writes history's own keys (under `__zarrdb/h/`) and the entries at Zarr keys as they
/// are stored, so a target can damage them.
pub struct RawEngine(Arc<dyn KvEngine>);

impl RawEngine {
    /// Open the database at `path`, with the options [`crate::DatabaseBuilder`] defaults to.
    pub fn open(backend: Backend, path: &Path) -> Result<RawEngine, Error> {
        let engine: Arc<dyn KvEngine> = match backend {
            Backend::Redb => {
                let options = RedbOptions {
                    cache_size: None,
                    verify: false,
                    multi_writer: false,
                    commit_log: true,
                    read_only: false,
                    shared_log_capacity: SHARED_LOG_CAPACITY,
                };
                Arc::new(RedbEngine::open(path, false, options)?)
            }
            Backend::Lmdb => Arc::new(LmdbEngine::open(path, false, true, None, false, true, false)?),
            Backend::Sled => Arc::new(SledEngine::open(path, false)?),
            #[cfg(feature = "object-store")]
            Backend::Bucket => {
                Arc::new(crate::store::bucket::BucketEngine::open(&path.to_string_lossy(), false, false)?)
            }
            #[cfg(not(feature = "object-store"))]
            Backend::Bucket => return Err(crate::db::bucket_unavailable(path).into()),
        };
        Ok(RawEngine(engine))
    }

    /// Every key under `prefix`, in order.
    pub fn keys(&self, prefix: &str) -> Result<Vec<String>, Error> {
        Ok(self.0.snapshot()?.keys(prefix)?)
    }

    /// The value stored at `key`.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, Error> {
        Ok(self.0.snapshot()?.get(key)?)
    }

    /// Store `value` at `key` (`None`: remove it), durably.
    pub fn put(&self, key: &str, value: Option<&[u8]>) -> Result<(), Error> {
        let mut batch = WriteBatch::default();
        batch.puts.insert(key.to_owned(), value.map(<[u8]>::to_vec));
        Ok(self.0.commit(batch, true)?)
    }
}
