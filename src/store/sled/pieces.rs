//! Values longer than [`PIECE`] bytes, stored in pieces.
//!
//! sled writes a log item larger than about a quarter of its segment (128 KiB by default) to a
//! file of its own in `blobs/`, and deletes a superseded blob only once its log has moved about two
//! segments on. A commit that overwrites a large value adds some 40 bytes to the log, so that is
//! some 26,000 commits later: overwriting 16 values of 256 KiB grew the folder to 10.7 GB after
//! 16,384 commits, one file per commit (`sled-0.34.7/src/pagecache/logger.rs`, `segment.rs`).
//! Pieces of at most 64 KiB stay in the log, whose segments sled cleans as they empty.
//!
//! Layout: a value of at most `PIECE` bytes is stored under its key as it is. A longer one has a
//! head under `KEY\0` (its length and a generation, two little-endian `u64`) and its pieces under
//! `KEY\0`, the generation (8 bytes big-endian) and the piece's index (4 bytes big-endian). Zarr
//! keys hold no NUL, so none of these names a key, and they sort just after the key's own name.
//!
//! sled has no snapshots, so a read takes the head, then the pieces of its generation, and starts
//! again if a commit replaced them meanwhile: the pieces of one generation never change, a commit
//! only removes them, and the next value of the key gets the next generation.

use std::cell::Cell;

use super::NAME;
use crate::error::StoreError;
use crate::store::kv::engine_error;
use crate::store::lend_within;

/// The longest value stored whole, and the length of every piece but the last.
pub(super) const PIECE: usize = 64 << 10;

/// Reads that find their pieces replaced by a commit start again, at most this many times.
const MAX_RETRIES: usize = 1000;

fn head_key(key: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + 1);
    out.extend_from_slice(key.as_bytes());
    out.push(0);
    out
}

fn piece_key(key: &str, generation: u64, index: u32) -> Vec<u8> {
    let mut out = head_key(key);
    out.extend_from_slice(&generation.to_be_bytes());
    out.extend_from_slice(&index.to_be_bytes());
    out
}

/// The length and generation a head holds.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Head {
    len: u64,
    generation: u64,
}

impl Head {
    fn parse(key: &str, bytes: &[u8]) -> Result<Head, StoreError> {
        let damaged = || StoreError::Damaged {
            backend: NAME,
            operation: "get",
            key: key.to_owned(),
            what: "a value's head is not 16 bytes",
        };
        let bytes: &[u8; 16] = bytes.try_into().map_err(|_| damaged())?;
        let (len, generation) = bytes.split_at(8);
        Ok(Head {
            len: u64::from_le_bytes(len.try_into().expect("8 bytes")),
            generation: u64::from_le_bytes(generation.try_into().expect("8 bytes")),
        })
    }

    fn encode(self) -> [u8; 16] {
        let mut out = [0; 16];
        out[..8].copy_from_slice(&self.len.to_le_bytes());
        out[8..].copy_from_slice(&self.generation.to_le_bytes());
        out
    }

    fn pieces(self) -> u64 {
        self.len.div_ceil(PIECE as u64)
    }
}

fn head(tree: &sled::Tree, key: &str) -> Result<Option<Head>, StoreError> {
    match tree.get(head_key(key)).map_err(engine_error(NAME, "get", key))? {
        Some(bytes) => Head::parse(key, &bytes).map(Some),
        None => Ok(None),
    }
}

/// Adds to `ops` what replaces the value of `key` by `value` (`None` removes it). Reads the head
/// the tree holds now, so the caller must be the only writer until `ops` is applied.
pub(super) fn stage(
    tree: &sled::Tree,
    ops: &mut sled::Batch,
    key: &str,
    value: Option<&[u8]>,
) -> Result<(), StoreError> {
    let old = head(tree, key)?;
    if let Some(old) = old {
        ops.remove(head_key(key));
        for index in 0..old.pieces() {
            ops.remove(piece_key(key, old.generation, index as u32));
        }
    }
    match value {
        Some(value) if value.len() > PIECE => {
            ops.remove(key.as_bytes());
            let new = Head { len: value.len() as u64, generation: old.map_or(0, |o| o.generation.wrapping_add(1)) };
            for (index, piece) in value.chunks(PIECE).enumerate() {
                ops.insert(piece_key(key, new.generation, index as u32), piece);
            }
            ops.insert(head_key(key), &new.encode()[..]);
        }
        Some(value) => ops.insert(key.as_bytes(), value),
        None => ops.remove(key.as_bytes()),
    }
    Ok(())
}

/// Bytes `start..end` of the value of `key`, `None` when there is no value; the range is
/// resolved by `resolve` once the length is known (`None` from it: out of bounds, an error).
pub(super) fn read(
    tree: &sled::Tree,
    key: &str,
    resolve: impl Fn(u64) -> Result<std::ops::Range<usize>, StoreError>,
) -> Result<Option<Vec<u8>>, StoreError> {
    if let Some(whole) = tree.get(key.as_bytes()).map_err(engine_error(NAME, "get", key))? {
        return Ok(Some(whole[resolve(whole.len() as u64)?].to_vec()));
    }
    read_in_pieces(tree, key, resolve)
}

/// Lends the value of `key` to `read` if it is at most `limit` bytes long, and returns its
/// length. A whole value is lent where sled holds it; one in pieces is put together only when
/// its head says it is within `limit`.
pub(super) fn lend(
    tree: &sled::Tree,
    key: &str,
    limit: u64,
    read: &mut dyn FnMut(&[u8]),
) -> Result<Option<u64>, StoreError> {
    if let Some(whole) = tree.get(key.as_bytes()).map_err(engine_error(NAME, "get", key))? {
        return Ok(Some(lend_within(&whole, limit, read)));
    }
    // The length is that of the head the pieces were read under, which a retry may replace.
    let len = Cell::new(0);
    let within = |n: u64| {
        len.set(n);
        Ok(if n <= limit { 0..n as usize } else { 0..0 })
    };
    let Some(value) = read_in_pieces(tree, key, within)? else { return Ok(None) };
    if len.get() <= limit {
        read(&value);
    }
    Ok(Some(len.get()))
}

/// [`read`] for a value that is not stored whole: its head, then its pieces.
fn read_in_pieces(
    tree: &sled::Tree,
    key: &str,
    resolve: impl Fn(u64) -> Result<std::ops::Range<usize>, StoreError>,
) -> Result<Option<Vec<u8>>, StoreError> {
    let mut seen = head(tree, key)?;
    for _ in 0..MAX_RETRIES {
        let Some(at) = seen else { return Ok(None) };
        let range = resolve(at.len)?;
        if let Some(bytes) = read_pieces(tree, key, at, range)? {
            return Ok(Some(bytes));
        }
        // A piece is gone: a commit replaced the value, or the file is damaged.
        let now = head(tree, key)?;
        if now == seen {
            return Err(StoreError::Damaged {
                backend: NAME,
                operation: "get",
                key: key.to_owned(),
                what: "a piece of a value is missing",
            });
        }
        seen = now;
    }
    Err(StoreError::Damaged {
        backend: NAME,
        operation: "get",
        key: key.to_owned(),
        what: "a value kept changing while it was read",
    })
}

/// The bytes `range` of the value `head` describes, or `None` if one of its pieces is gone.
fn read_pieces(
    tree: &sled::Tree,
    key: &str,
    head: Head,
    range: std::ops::Range<usize>,
) -> Result<Option<Vec<u8>>, StoreError> {
    let mut out = Vec::with_capacity(range.len().min(64 << 20));
    if range.is_empty() {
        return Ok(Some(out));
    }
    let (first, last) = (range.start / PIECE, (range.end - 1) / PIECE);
    for index in first..=last {
        let Some(piece) =
            tree.get(piece_key(key, head.generation, index as u32)).map_err(engine_error(NAME, "get", key))?
        else {
            return Ok(None);
        };
        let expected = if index as u64 + 1 == head.pieces() { head.len as usize - index * PIECE } else { PIECE };
        if piece.len() != expected {
            return Err(StoreError::Damaged {
                backend: NAME,
                operation: "get",
                key: key.to_owned(),
                what: "a piece of a value has the wrong length",
            });
        }
        let start = range.start.saturating_sub(index * PIECE);
        let end = (range.end - index * PIECE).min(PIECE).min(piece.len());
        out.extend_from_slice(&piece[start..end]);
    }
    Ok(Some(out))
}

/// The length of the value of `key`.
pub(super) fn size(tree: &sled::Tree, key: &str) -> Result<Option<u64>, StoreError> {
    if let Some(whole) = tree.get(key.as_bytes()).map_err(engine_error(NAME, "get", key))? {
        return Ok(Some(whole.len() as u64));
    }
    Ok(head(tree, key)?.map(|h| h.len))
}

/// The key a sled key stands for in listings: itself, the key of a head, or `None` for a piece.
pub(super) fn listed(raw: &[u8]) -> Option<&[u8]> {
    match raw.iter().position(|&b| b == 0) {
        None => Some(raw),
        Some(at) if at + 1 == raw.len() => Some(&raw[..at]),
        Some(_) => None,
    }
}
