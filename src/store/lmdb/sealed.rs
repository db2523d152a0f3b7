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

/// The key of the flag: present in every database created with checksums. Under the reserved
/// prefix, so users can neither write nor erase it (a test below holds it there).
pub(crate) const FLAG_KEY: &str = "__zarrdb/lmdb-value-checksum";
const FLAG_VALUE: &[u8] = b"crc32c";
const TRAILER: usize = 4;
/// Ranged reads of values up to this size check the whole value (microseconds); larger values,
/// the shards of sharded arrays, are checked by whole reads and `check`, so that reading one
/// inner chunk of a shard does not read the whole shard: with a 16 MiB limit, `zarrdb bench
/// --workload sharded_partial` fell from 11,132 to 303 regions/s.
const RANGE_CHECK_LIMIT: usize = 64 << 10;

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

    /// The value in `stored` (what LMDB holds under `key`) and, when it is sealed, the checksum
    /// it must match ([`verify`]).
    pub(super) fn split<'a>(self, key: &str, stored: &'a [u8]) -> Result<(&'a [u8], Option<u32>), Refusal> {
        if self == Layout::Bare || key == FLAG_KEY {
            return Ok((stored, None));
        }
        let Some(split) = stored.len().checked_sub(TRAILER) else {
            return Err("the value is shorter than its checksum");
        };
        let (value, trailer) = stored.split_at(split);
        Ok((value, Some(u32::from_le_bytes(trailer.try_into().unwrap_or_default()))))
    }
}

/// Check `value`, stored under `key`, against the checksum `split` found (`None`: nothing to
/// check).
pub(super) fn verify(key: &str, value: &[u8], expected: Option<u32>) -> Result<(), Refusal> {
    match expected {
        Some(sum) if checksum(key, value) != sum => Err("the value does not match its checksum (damaged value or key)"),
        _ => Ok(()),
    }
}

/// Whether a ranged read of a value of `len` bytes checks the whole value (see
/// [`RANGE_CHECK_LIMIT`]).
pub(super) fn range_checks(len: usize) -> bool {
    len <= RANGE_CHECK_LIMIT
}

fn checksum(key: &str, value: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(key.as_bytes()), value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_lies_under_the_reserved_prefix() {
        assert!(FLAG_KEY.starts_with(crate::key::RESERVED_PREFIX));
    }

    #[test]
    fn a_changed_byte_key_or_length_is_refused() {
        let key = "a/c/0";
        let value = b"some chunk bytes";
        let mut stored = value.to_vec();
        stored.extend_from_slice(&checksum(key, value).to_le_bytes());
        let opens = |key: &str, stored: &[u8]| {
            let (value, sum) = Layout::Sealed.split(key, stored)?;
            verify(key, value, sum).map(|()| value.to_vec())
        };
        assert_eq!(opens(key, &stored), Ok(value.to_vec()));
        assert!(opens("a/c/1", &stored).is_err(), "the key is part of the sum");
        for i in 0..stored.len() {
            let mut damaged = stored.clone();
            damaged[i] ^= 0x10;
            assert!(opens(key, &damaged).is_err(), "byte {i}");
        }
        assert!(opens(key, &stored[..stored.len() - 1]).is_err());
        assert!(opens(key, &stored[..3]).is_err());
        assert_eq!(Layout::Bare.split(key, value), Ok((&value[..], None)));
    }
}
