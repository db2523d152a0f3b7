//! How many commits a sled database held when it last reached the disk, kept outside sled.
//!
//! sled frames each message of its log with a CRC, and recovery stops at the first message that
//! fails it: it treats the rest as the torn tail of a crash. So damage in the middle of the log
//! (a flipped bit, a zeroed page) opens without an error, as an earlier state, silently missing
//! every commit after the damage. To tell that from a crash, each commit also counts itself
//! under a key of its own in sled, and after each flush the count is written to the file
//! `zarrdb-commits` beside sled's files. A flush makes every commit so far durable before the
//! file is written, so after a crash sled holds at least as many commits as the file says (the
//! file itself is not synced: if it lags, it only says less); holding fewer means sled's log lost
//! durable commits, and the open reports the database as damaged.
//!
//! The file is 16 bytes: the count and the count XOR [`CHECK`], both u64 little-endian.

use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};

use crate::store::special;

/// The sled key the count is kept under. A Zarr key holds no NUL, and `pieces::listed` leaves
/// sled keys with a NUL before their end out of listings.
pub(super) const COUNT_KEY: &[u8] = b"\0zarrdb/commits";

const FILE: &str = "zarrdb-commits";
const CHECK: u64 = 0x7a61_7272_6462_2121;

/// The count a sled value holds.
pub(super) fn parse_count(value: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(value.try_into().ok()?))
}

pub(super) fn file(folder: &Path) -> PathBuf {
    folder.join(FILE)
}

/// The count the file in `folder` holds: `None` without a file (a database from before the file,
/// or a crash before the first flush); an error if it is damaged.
pub(super) fn read(folder: &Path) -> Result<Option<u64>, &'static str> {
    // Not following links and never waiting on a FIFO: zarrdb makes this file, as a regular file.
    let mut bytes = Vec::with_capacity(16);
    let read = special::open_regular(&file(folder), std::fs::OpenOptions::new().read(true), true)
        // Up to one byte past the 16 it holds: a longer file shows, and nothing larger is read.
        .and_then(|f| f.take(17).read_to_end(&mut bytes));
    match read {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(_) => return Err("its commit count (zarrdb-commits) cannot be read"),
    };
    let damaged = "its commit count (zarrdb-commits) is damaged";
    let bytes: [u8; 16] = bytes.try_into().map_err(|_| damaged)?;
    let count = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    let check = u64::from_le_bytes(bytes[8..].try_into().expect("8 bytes"));
    if count ^ CHECK != check {
        return Err(damaged);
    }
    Ok(Some(count))
}

/// Records `count` in the file in `folder` (after a flush made those commits durable).
pub(super) fn write(folder: &Path, count: u64) -> std::io::Result<()> {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&count.to_le_bytes());
    bytes[8..].copy_from_slice(&(count ^ CHECK).to_le_bytes());
    // One write of 16 bytes in place, at offset 0: it lands whole or not at all.
    let mut file = special::open_regular(
        &file(folder),
        std::fs::OpenOptions::new().write(true).create(true).truncate(false),
        true,
    )?;
    file.write_all(&bytes)
}
