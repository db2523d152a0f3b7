//! Reads of one redb commit: a value whole, in part or lent to the caller, put together from its
//! segments (`layout.rs`), and the keys in order with the segments' own keys left out.

use std::sync::Arc;

use redb::ReadOnlyTable;

use super::layout::{continuation_bounds, continuation_index, may_have_tail, past_continuations, segment_key};
use super::{handle, unpanicked, NAME};
use crate::error::StoreError;
use crate::store::kv::{engine_error, out_of_order, KvSnapshot};
use crate::store::ByteRange;

pub(super) struct RedbSnapshot {
    /// `None` in a database where nothing was ever written. Declared first: ends before the
    /// database it reads.
    pub(super) table: Option<ReadOnlyTable<&'static [u8], &'static [u8]>>,
    /// The values' tails (`layout.rs`); `None` in files of formats before 4.
    pub(super) tails: Option<ReadOnlyTable<&'static [u8], &'static [u8]>>,
    /// Keeps the database open while the snapshot reads it, even once the engine has opened
    /// the file again or replaced it by a compacted copy (`handle.rs`).
    pub(super) _db: Arc<handle::Open>,
}

/// Where the bytes of one value are.
#[derive(Clone, Copy)]
struct Extent {
    /// The value's length.
    len: u64,
    /// The length of segment 0 (of every segment but the last).
    segment: usize,
    /// How many of its bytes are in segments; the rest is its tail.
    head: u64,
}

impl RedbSnapshot {
    /// Where the value under `key` is, or `None` when there is none.
    fn extent(&self, table: &ReadOnlyTable<&[u8], &[u8]>, key: &str) -> Result<Option<Extent>, StoreError> {
        let err = engine_error(NAME, "size", key);
        let Some(first) = table.get(key.as_bytes()).map_err(err)? else { return Ok(None) };
        let segment = first.value().len();
        drop(first);
        let head = self.segmented_len(table, key, segment)?.unwrap_or(segment as u64);
        let tail = self.tail_len(key, segment)?;
        Ok(Some(Extent { len: head.saturating_add(tail), segment, head }))
    }

    /// The length of the tail of the value under `key`, whose segment 0 is `segment` bytes long.
    fn tail_len(&self, key: &str, segment: usize) -> Result<u64, StoreError> {
        let Some(tails) = self.tails.as_ref().filter(|_| may_have_tail(key, segment)) else { return Ok(0) };
        let tail = tails.get(key.as_bytes()).map_err(engine_error(NAME, "size", key))?;
        Ok(tail.map_or(0, |t| t.value().len() as u64))
    }

    /// The whole length of the segments of the value under `key`, whose first segment is
    /// `first_len` bytes long; `None` when it has no other segment.
    fn segmented_len(
        &self,
        table: &ReadOnlyTable<&[u8], &[u8]>,
        key: &str,
        first_len: usize,
    ) -> Result<Option<u64>, StoreError> {
        let (lo, hi) = continuation_bounds(key);
        let last = table.range(lo.as_slice()..=hi.as_slice()).map_err(engine_error(NAME, "size", key))?.next_back();
        let Some(entry) = last else { return Ok(None) };
        let (k, v) = entry.map_err(engine_error(NAME, "size", key))?;
        // Every segment but the last is as long as the first (`layout.rs`).
        let index = continuation_index(k.value()).unwrap_or(0) as u64;
        if first_len == 0 {
            return Err(missing_segment(key, 0));
        }
        Ok(Some(index.saturating_mul(first_len as u64).saturating_add(v.value().len() as u64)))
    }

    /// Bytes `start..end` of the value under `key`, which lies at `extent`.
    fn read(
        &self,
        table: &ReadOnlyTable<&[u8], &[u8]>,
        key: &str,
        (start, end): (usize, usize),
        extent: Extent,
    ) -> Result<Vec<u8>, StoreError> {
        let size = extent.segment;
        if size == 0 {
            return Err(missing_segment(key, 0));
        }
        let head = usize::try_from(extent.head).unwrap_or(usize::MAX);
        // The length came from the file: a damaged one may claim any, so memory grows only with
        // the segments actually found.
        let mut out = Vec::with_capacity((end - start).min(1 << 26));
        let mut index = start / size;
        while index * size < end.min(head) {
            let k = segment_key(key, index as u32);
            let guard = table.get(k.as_slice()).map_err(engine_error(NAME, "get", key))?;
            let seg = guard.as_ref().map(|g| g.value()).unwrap_or_default();
            let lo = start.saturating_sub(index * size).min(seg.len());
            let hi = (end.min(head) - index * size).min(seg.len());
            if lo >= hi {
                return Err(missing_segment(key, index));
            }
            out.extend_from_slice(&seg[lo..hi]);
            index += 1;
        }
        // A segment before the last that is shorter than the first leaves a gap.
        if out.len() != end.min(head).saturating_sub(start) {
            return Err(missing_segment(key, index.saturating_sub(1)));
        }
        if end > head {
            let tail = match &self.tails {
                Some(tails) => tails.get(key.as_bytes()).map_err(engine_error(NAME, "get", key))?,
                None => None,
            };
            let tail = tail.as_ref().map(|t| t.value()).unwrap_or_default();
            let (lo, hi) = (start.saturating_sub(head), end - head);
            let Some(bytes) = tail.get(lo..hi) else { return Err(missing_tail(key)) };
            out.extend_from_slice(bytes);
        }
        Ok(out)
    }
}

/// The tail the value's length says it has is absent or short: the file is damaged.
fn missing_tail(key: &str) -> StoreError {
    StoreError::Engine {
        backend: NAME,
        operation: "get",
        key: key.to_owned(),
        source: "the tail of the value is missing or short".into(),
    }
}

/// A segment the value's length says must exist is absent or short: the file is damaged.
fn missing_segment(key: &str, index: usize) -> StoreError {
    StoreError::Engine {
        backend: NAME,
        operation: "get",
        key: key.to_owned(),
        source: format!("segment {index} of the value is missing or short").into(),
    }
}

impl KvSnapshot for RedbSnapshot {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.get_range(key, ByteRange::FromStart { offset: 0, length: None })
    }

    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        unpanicked("get", key, || self.get_range_inner(key, range))
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        let Some(table) = &self.table else { return Ok(None) };
        unpanicked("size", key, || Ok(self.extent(table, key)?.map(|extent| extent.len)))
    }

    /// A value of one segment is lent from redb's page; a longer one is put together first.
    fn with_value(&self, key: &str, read: &mut dyn FnMut(&[u8])) -> Result<bool, StoreError> {
        Ok(self.with_value_within(key, u64::MAX, read)?.is_some())
    }

    /// The lookup that finds the value's first segment gives its length, so a value over
    /// `limit` is refused before anything past that segment is read.
    fn with_value_within(&self, key: &str, limit: u64, read: &mut dyn FnMut(&[u8])) -> Result<Option<u64>, StoreError> {
        let Some(table) = &self.table else { return Ok(None) };
        unpanicked("get", key, || {
            // One lookup of the first segment, lent to `read` when it is the whole value.
            let Some(first) = table.get(key.as_bytes()).map_err(engine_error(NAME, "get", key))? else {
                return Ok(None);
            };
            let segment = first.value().len();
            let head = self.segmented_len(table, key, segment)?;
            let tail = self.tail_len(key, segment)?;
            let len = head.unwrap_or(segment as u64).saturating_add(tail);
            if len > limit {
                return Ok(Some(len));
            }
            if head.is_none() && tail == 0 {
                read(first.value());
            } else {
                drop(first);
                let head = head.unwrap_or(segment as u64);
                let extent = Extent { len, segment, head };
                let end = usize::try_from(extent.len).unwrap_or(usize::MAX);
                read(&self.read(table, key, (0, end), extent)?);
            }
            Ok(Some(len))
        })
    }

    fn next_key(&self, from: &str, within: &str) -> Result<Option<String>, StoreError> {
        unpanicked("list", from, || self.next_key_inner(from, within))
    }

    fn keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        unpanicked("list", prefix, || self.keys_inner(prefix))
    }
}

impl RedbSnapshot {
    fn get_range_inner(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(table) = &self.table else { return Ok(None) };
        let Some(extent) = self.extent(table, key)? else { return Ok(None) };
        let r = range.resolve(extent.len).ok_or_else(|| StoreError::RangeOutOfBounds {
            key: key.to_owned(),
            range: range.describe(),
            len: extent.len,
        })?;
        if r.is_empty() {
            return Ok(Some(Vec::new()));
        }
        self.read(table, key, (r.start, r.end), extent).map(Some)
    }

    fn next_key_inner(&self, from: &str, within: &str) -> Result<Option<String>, StoreError> {
        let Some(table) = &self.table else { return Ok(None) };
        let mut start = from.as_bytes().to_vec();
        loop {
            let mut range = table.range(start.as_slice()..).map_err(engine_error(NAME, "list", from))?;
            let Some(entry) = range.next() else { return Ok(None) };
            let (k, _) = entry.map_err(engine_error(NAME, "list", from))?;
            let k = k.value();
            if k < start.as_slice() {
                return Err(out_of_order(NAME, "list", from));
            }
            if continuation_index(k).is_some() {
                // Landed inside a value's segments (`from` ended in NUL): step past them.
                let nul = k.iter().position(|&b| b == 0).unwrap_or(k.len());
                start = past_continuations(&k[..nul]);
                continue;
            }
            let key = utf8(k, from)?;
            return Ok(key.starts_with(within).then_some(key));
        }
    }

    fn keys_inner(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let Some(table) = &self.table else { return Ok(Vec::new()) };
        let mut keys = Vec::new();
        for entry in table.range(prefix.as_bytes()..).map_err(engine_error(NAME, "list", prefix))? {
            let (k, _) = entry.map_err(engine_error(NAME, "list", prefix))?;
            let k = k.value();
            if !k.starts_with(prefix.as_bytes()) {
                break;
            }
            if continuation_index(k).is_none() {
                let key = utf8(k, prefix)?;
                // A damaged tree can lead the walk in circles; a sound one only goes forward.
                if keys.last().is_some_and(|last: &String| *last >= key) {
                    return Err(out_of_order(NAME, "list", prefix));
                }
                keys.push(key);
            }
        }
        Ok(keys)
    }
}

fn utf8(key: &[u8], context: &str) -> Result<String, StoreError> {
    String::from_utf8(key.to_vec()).map_err(|e| StoreError::Engine {
        backend: NAME,
        operation: "list",
        key: context.to_owned(),
        source: Box::new(e.utf8_error()),
    })
}
