//! The format marker read or rewritten through each engine's own crate, bypassing zarrdb (the
//! database must be closed). Included with `#[path]` by the tests that need it.
#![allow(dead_code, reason = "each including test file uses part of this module")]

use std::path::Path;

use zarrdb::Backend;

pub const MARKER: &str = "__zarrdb/format";

/// Replace (`Some`) or remove (`None`) the marker of the closed database at `path`, bypassing
/// zarrdb; returns the marker that was there.
pub fn swap_marker(backend: Backend, path: &Path, value: Option<&[u8]>) -> Option<Vec<u8>> {
    match backend {
        Backend::Redb => {
            // Table `zarr` holds `&[u8]` keys (docs/format.md); the marker is one short segment.
            let table: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("zarr");
            let db = redb::Database::open(path).unwrap();
            let txn = db.begin_write().unwrap();
            let old = {
                let mut t = txn.open_table(table).unwrap();
                let old = match value {
                    Some(v) => t.insert(MARKER.as_bytes(), v).unwrap(),
                    None => t.remove(MARKER.as_bytes()).unwrap(),
                };
                old.map(|g| g.value().to_vec())
            };
            txn.commit().unwrap();
            old
        }
        Backend::Lmdb => {
            // SAFETY: the database is closed; nothing else maps the file.
            let env = unsafe { heed::EnvOpenOptions::new().map_size(1 << 30).open(path) }.unwrap();
            let mut txn = env.write_txn().unwrap();
            let db: heed::Database<heed::types::Str, heed::types::Bytes> =
                env.open_database(&txn, None).unwrap().unwrap();
            let old = db.get(&txn, MARKER).unwrap().map(lmdb_unseal);
            match value {
                Some(v) => db.put(&mut txn, MARKER, &lmdb_seal(MARKER, v)).unwrap(),
                None => drop(db.delete(&mut txn, MARKER).unwrap()),
            }
            txn.commit().unwrap();
            env.prepare_for_closing().wait();
            old
        }
        Backend::Sled => {
            let db = open_sled(path);
            let old = match value {
                Some(v) => db.insert(MARKER, v).unwrap(),
                None => db.remove(MARKER).unwrap(),
            };
            db.flush().unwrap();
            old.map(|v| v.to_vec())
        }
        other => unreachable!("{other:?}"),
    }
}

/// The marker as stored, read through the engine's own crate (the database must be closed).
pub fn raw_marker(backend: Backend, path: &Path) -> Option<Vec<u8>> {
    match backend {
        Backend::Redb => {
            let table: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("zarr");
            let db = redb::Database::open(path).unwrap();
            let txn = redb::ReadableDatabase::begin_read(&db).unwrap();
            let value = txn.open_table(table).unwrap().get(MARKER.as_bytes()).unwrap().map(|v| v.value().to_vec());
            value
        }
        Backend::Lmdb => {
            // SAFETY: the database is closed; nothing else maps the file.
            let env = unsafe { heed::EnvOpenOptions::new().map_size(1 << 30).open(path) }.unwrap();
            let txn = env.read_txn().unwrap();
            let db: heed::Database<heed::types::Str, heed::types::Bytes> =
                env.open_database(&txn, None).unwrap().unwrap();
            // Databases without the checksum flag (LMDB format 1) hold their values bare.
            let sealed = db.get(&txn, "__zarrdb/lmdb-value-checksum").unwrap().is_some();
            let value = db.get(&txn, MARKER).unwrap().map(|v| if sealed { lmdb_unseal(v) } else { v.to_vec() });
            drop(txn);
            env.prepare_for_closing().wait();
            value
        }
        Backend::Sled => open_sled(path).get(MARKER).unwrap().map(|v| v.to_vec()),
        other => unreachable!("{other:?}"),
    }
}

/// An LMDB value as zarrdb stores it: followed by the CRC-32C of its key and bytes, little-endian
/// (docs/format.md).
fn lmdb_seal(key: &str, value: &[u8]) -> Vec<u8> {
    let sum = crc32c::crc32c_append(crc32c::crc32c(key.as_bytes()), value);
    [value, &sum.to_le_bytes()].concat()
}

/// The bytes of a stored LMDB value, without its checksum.
fn lmdb_unseal(stored: &[u8]) -> Vec<u8> {
    stored[..stored.len() - 4].to_vec()
}

/// sled's background threads hold its file lock for a moment after the database closes (zarrdb's
/// own open waits the same way); wait up to 2 s for it.
fn open_sled(path: &Path) -> sled::Db {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        match sled::open(path) {
            Ok(db) => return db,
            Err(e) if std::time::Instant::now() < deadline && e.to_string().contains("could not acquire lock") => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            Err(e) => panic!("sled::open({}): {e}", path.display()),
        }
    }
}
