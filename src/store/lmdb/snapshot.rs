//! Reads of one LMDB commit: values lent straight from the map, checked against their
//! checksums (`sealed.rs`), and keys in order, every read past the end of the file an error
//! (`fault.rs`).

use std::ops::Bound;
use std::sync::Arc;

use heed::{RoTxn, WithoutTls};
use parking_lot::Mutex;

use super::{fault, lmdb_error, sealed, Db, Hold, NAME};
use crate::error::StoreError;
use crate::store::kv::{out_of_order, slice_range, KvSnapshot};
use crate::store::ByteRange;
use sealed::Layout;

pub(super) struct LmdbSnapshot {
    /// LMDB lets one thread at a time use a read transaction.
    pub(super) txn: Mutex<RoTxn<'static, WithoutTls>>,
    pub(super) db: Db,
    pub(super) mapping: Arc<fault::Mapping>,
    /// The bytes of the mapping in use by this snapshot: every value lies within them.
    pub(super) limit: usize,
    pub(super) layout: Layout,
    pub(super) _hold: Hold,
}

impl LmdbSnapshot {
    /// Run `f` on the value under `key` and the checksum it must match (`sealed.rs`); `reads`:
    /// `f` reads the value's bytes, whose pages are then given back ([`release`]).
    fn with_stored<R>(
        &self,
        key: &str,
        reads: bool,
        f: impl FnOnce(&[u8], Option<u32>) -> Result<R, StoreError>,
    ) -> Result<Option<R>, StoreError> {
        let txn = self.txn.lock();
        let found = self.db.get(&txn, key);
        self.mapping.check(NAME, "get", key)?;
        let Some(stored) = found.map_err(lmdb_error("get", key))? else { return Ok(None) };
        // A damaged size would have the copy read far past the file (and allocate as much).
        if !self.mapping.holds(stored, self.limit) {
            return Err(damaged(key, "the value's size runs past the pages in use"));
        }
        // SAFETY: `stored` lies in a page of the map that this snapshot's read transaction sees.
        // LMDB neither changes nor reuses a page a live read transaction can see; the transaction
        // lives as long as `self` (it is `self.txn`), and the map is not moved while `self` holds
        // `_hold` (a remap waits for every hold). So the bytes stay valid for the borrow of
        // `self` after the lock is let go: it serialises LMDB's calls on the transaction, and
        // reading the bytes is none, so other threads' lookups need not wait for `f`.
        let stored: &[u8] = unsafe { std::slice::from_raw_parts(stored.as_ptr(), stored.len()) };
        drop(txn);
        let (value, sum) = self.layout.split(key, stored).map_err(|what| damaged(key, what))?;
        let result = f(value, sum);
        self.mapping.check(NAME, "get", key)?;
        if reads {
            release(stored);
        }
        result.map(Some)
    }
}

/// Values at least this large give their pages of the map back once read (see [`release`]).
const RELEASE_BYTES: usize = 256 << 10;

/// Let go of this process's mapping of the whole pages inside `stored`, a large value just read.
/// Pages of `data.mdb` a process has touched through LMDB's map count in its resident memory
/// until it lets go of them, where the same bytes read with `pread` do not count (a whole-array
/// read grew the process by about the array's size again: docs/benchmarks.md); here they stay
/// in the kernel's page cache, and a later read maps them again.
fn release(stored: &[u8]) {
    if stored.len() < RELEASE_BYTES {
        return;
    }
    let page = super::page_size();
    let start = (stored.as_ptr() as usize).next_multiple_of(page);
    let end = (stored.as_ptr() as usize + stored.len()) / page * page;
    if end <= start {
        return;
    }
    // SAFETY: [start, end) lies inside `stored`, which lies in LMDB's map of `data.mdb`: a shared
    // mapping of the file, read-only (zarrdb never opens LMDB with MDB_WRITEMAP). On a shared file
    // mapping MADV_DONTNEED only drops this process's page table entries; the pages stay in the
    // page cache with the file's contents, and the next access (by any thread, LMDB included)
    // maps them again, so no reader sees a byte change. No Rust reference is invalidated: the
    // memory stays mapped. A failure only leaves the pages mapped.
    let _ = unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
}

fn damaged(key: &str, what: &'static str) -> StoreError {
    StoreError::Damaged { backend: NAME, operation: "get", key: key.to_owned(), what }
}

impl KvSnapshot for LmdbSnapshot {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.with_stored(key, true, |value, sum| {
            // Copied first: the check then reads the copy from the CPU's cache, not the mapping.
            let copy = value.to_vec();
            sealed::verify(key, &copy, sum).map_err(|what| damaged(key, what))?;
            Ok(copy)
        })
    }

    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        self.with_stored(key, true, |value, sum| {
            if sealed::range_checks(value.len()) {
                sealed::verify(key, value, sum).map_err(|what| damaged(key, what))?;
            }
            slice_range(key, value, range)
        })
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        self.with_stored(key, false, |value, _| Ok(value.len() as u64))
    }

    /// Straight from the map: the checksum is verified there and `read` decodes from there, so
    /// the value is never copied (`with_stored` turns a read past the end of the file into an
    /// error after `read` returns).
    fn with_value(&self, key: &str, read: &mut dyn FnMut(&[u8])) -> Result<bool, StoreError> {
        Ok(self.with_value_within(key, u64::MAX, read)?.is_some())
    }

    /// The value is in the map already, so its length is known before it is checked or read.
    fn with_value_within(&self, key: &str, limit: u64, read: &mut dyn FnMut(&[u8])) -> Result<Option<u64>, StoreError> {
        self.with_stored(key, true, |value, sum| {
            let len = value.len() as u64;
            if len <= limit {
                sealed::verify(key, value, sum).map_err(|what| damaged(key, what))?;
                read(value);
            }
            Ok(len)
        })
    }

    fn next_key(&self, from: &str, within: &str) -> Result<Option<String>, StoreError> {
        let txn = self.txn.lock();
        // LMDB refuses empty keys, even as a bound.
        let start = if from.is_empty() { Bound::Unbounded } else { Bound::Included(from) };
        let bounds = (start, Bound::Unbounded);
        let mut range = self.db.range(&txn, &bounds).map_err(lmdb_error("list", from))?;
        let next = range.next().transpose().map_err(lmdb_error("list", from));
        self.mapping.check(NAME, "list", from)?;
        Ok(next?.and_then(|(k, _)| k.starts_with(within).then(|| k.to_owned())))
    }

    fn keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let txn = self.txn.lock();
        let mut keys = Vec::new();
        // LMDB refuses empty keys, even as a prefix.
        let start = if prefix.is_empty() { Bound::Unbounded } else { Bound::Included(prefix) };
        for entry in self.db.range(&txn, &(start, Bound::Unbounded)).map_err(lmdb_error("list", prefix))? {
            let key = entry.map_err(lmdb_error("list", prefix))?.0;
            if !key.starts_with(prefix) {
                break;
            }
            if keys.last().is_some_and(|last: &String| last.as_str() >= key) {
                return Err(out_of_order(NAME, "list", prefix));
            }
            keys.push(key.to_owned());
        }
        self.mapping.check(NAME, "list", prefix)?;
        Ok(keys)
    }
}
