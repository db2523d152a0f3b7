//! Values with a checksum: LMDB keeps none of its own, so a damaged page of value bytes would be
//! read back as data. Each value is stored followed by the CRC-32C of its key and bytes (4 bytes,
//! little-endian), and every read checks it: damage to a value, or to the key it is filed under,
//! is an error instead of wrong data.
//!
//! Databases created before this layout hold bare values; a flag under the reserved prefix,
//! written when a database is created, tells the two apart (`Layout::of`).

use std::io::Write;

use heed::types::{Bytes, Str};
use heed::{RoTxn, RwTxn, WithoutTls};

/// The key of the flag: present in every database created with checksums.
pub(super) const FLAG_KEY: &str = "__zarrdb/lmdb-value-checksum";
const FLAG_VALUE: &[u8] = b"crc32c";
const TRAILER: usize = 4;
/// Ranged reads of values up to this size check the whole value (CRC-32C runs at several GB/s,
/// so at most a few milliseconds); larger values, the shards of sharded arrays, are checked by
/// whole reads and `check`, so that reading a few bytes of a large shard stays cheap.
const RANGE_CHECK_LIMIT: usize = 16 << 20;

type Db = heed::Database<Str, Bytes>;

/// How a database stores its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Layout {
    /// Each value followed by its checksum.
    Sealed,
    /// Bare values (databases created before checksums).
    Bare,
}

/// Why a stored value was refused.
pub(super) type Refusal = &'static str;

impl Layout {
    /// The layout of the database in `txn`, for a writable open: a database with no entries is
    /// new and gets the flag.
    pub(super) fn of_writable(db: Db, txn: &mut RwTxn<'_>) -> heed::Result<Result<Layout, Refusal>> {
        if db.is_empty(txn)? {
            db.put(txn, FLAG_KEY, FLAG_VALUE)?;
            return Ok(Ok(Layout::Sealed));
        }
        Layout::of(db, txn)
    }

    /// The layout recorded in the database.
    pub(super) fn of(db: Db, txn: &RoTxn<'_, WithoutTls>) -> heed::Result<Result<Layout, Refusal>> {
        Ok(match db.get(txn, FLAG_KEY)? {
            Some(FLAG_VALUE) => Ok(Layout::Sealed),
            Some(_) => Err("the value-checksum flag is damaged"),
            None => Ok(Layout::Bare),
        })
    }

    /// Store `value` under `key` in this layout.
    pub(super) fn put(self, db: Db, txn: &mut RwTxn<'_>, key: &str, value: &[u8]) -> heed::Result<()> {
        match self {
            Layout::Bare => db.put(txn, key, value),
            Layout::Sealed => {
                let sum = checksum(key, value);
                db.put_reserved(txn, key, value.len() + TRAILER, |space| {
                    space.write_all(value)?;
                    space.write_all(&sum.to_le_bytes())
                })
            }
        }
    }

    /// The value in `stored` (what LMDB holds under `key`), checked when it is sealed. A ranged
    /// read (`whole` false) of a value over [`RANGE_CHECK_LIMIT`] is not checked.
    pub(super) fn open<'a>(self, key: &str, stored: &'a [u8], whole: bool) -> Result<&'a [u8], Refusal> {
        if self == Layout::Bare || key == FLAG_KEY {
            return Ok(stored);
        }
        let Some(split) = stored.len().checked_sub(TRAILER) else {
            return Err("the value is shorter than its checksum");
        };
        let (value, trailer) = stored.split_at(split);
        if !whole && value.len() > RANGE_CHECK_LIMIT {
            return Ok(value);
        }
        let expected = u32::from_le_bytes(trailer.try_into().unwrap_or_default());
        match checksum(key, value) == expected {
            true => Ok(value),
            false => Err("the value does not match its checksum (damaged value or key)"),
        }
    }
}

fn checksum(key: &str, value: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(key.as_bytes()), value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_byte_key_or_length_is_refused() {
        let key = "a/c/0";
        let value = b"some chunk bytes";
        let mut stored = value.to_vec();
        stored.extend_from_slice(&checksum(key, value).to_le_bytes());
        assert_eq!(Layout::Sealed.open(key, &stored, true), Ok(&value[..]));
        assert!(Layout::Sealed.open("a/c/1", &stored, true).is_err(), "the key is part of the sum");
        for i in 0..stored.len() {
            let mut damaged = stored.clone();
            damaged[i] ^= 0x10;
            assert!(Layout::Sealed.open(key, &damaged, true).is_err(), "byte {i}");
        }
        assert!(Layout::Sealed.open(key, &stored[..stored.len() - 1], true).is_err());
        assert!(Layout::Sealed.open(key, &stored[..3], true).is_err());
        assert_eq!(Layout::Bare.open(key, value, true), Ok(&value[..]));
    }
}
