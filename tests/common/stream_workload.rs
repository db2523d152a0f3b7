//! The workload of `tests/crash_streamed_writes.rs`: every transaction is one auto-commit region
//! write large enough to be streamed into its commit (`src/array/stream.rs`, 16 MiB and more).
//!
//! One array, `/big` (uint32 2176x2176 in 256x256 chunks, zstd). Transaction `k` writes the region
//! `[0, rows_k) x [0, cols_k)` (rows and columns between 2048 and 2176, so the edge chunks are
//! read, patched and rewritten) with values made from `k`; element `[0, 0]` holds `k` itself,
//! which is how a database tells which transaction it holds. Every second transaction writes
//! zeros (the fill value) over a band of rows, so whole chunks are erased and others patched.

use serde_json::json;
use zarrdb::metadata::NamedConfig;
use zarrdb::{Array, ArrayMetadata, DataType, Database, Error};

use super::crash_harness::checks::verify_array_bytes;
use super::crash_harness::Workload;

const PATH: &str = "/big";
const SIDE: u64 = 2176;
const CHUNK: u64 = 256;
/// The band of rows every second transaction fills with zeros.
const ZERO_ROWS: std::ops::Range<u64> = 300..800;

/// The region transaction `k` writes: its shape, from the origin.
fn region(k: u64) -> [u64; 2] {
    [2048 + (k * 53) % 129, 2048 + (k * 97) % 129]
}

/// The value transaction `k` writes at `(row, col)`.
fn value(k: u64, row: u64, col: u64) -> u32 {
    if row == 0 && col == 0 {
        return k as u32;
    }
    if k % 2 == 0 && ZERO_ROWS.contains(&row) {
        return 0;
    }
    ((k as u32).wrapping_mul(0x9e37_79b1) ^ (row * SIDE + col) as u32) | 1
}

/// The content of the database after transactions `1..=txn`.
pub struct Model {
    txn: u64,
    values: Vec<u32>,
}

impl Workload for Model {
    fn initial() -> Model {
        Model { txn: 0, values: vec![0; (SIDE * SIDE) as usize] }
    }

    fn txn(&self) -> u64 {
        self.txn
    }

    fn replay_next(&mut self) {
        self.txn += 1;
        let [rows, cols] = region(self.txn);
        for row in 0..rows {
            for col in 0..cols {
                self.values[(row * SIDE + col) as usize] = value(self.txn, row, col);
            }
        }
    }

    fn node_counts(&self) -> (usize, usize) {
        (1, 1)
    }

    fn committed_txn(db: &Database) -> Result<u64, Error> {
        let array = Array::open(db.begin_read()?.store(), PATH)?;
        Ok(u64::from(array.read_region::<u32>(&[0, 0], &[1, 1])?[0]))
    }

    fn setup(db: &Database) -> Result<(), Error> {
        let mut meta = ArrayMetadata::new(DataType::UInt32, vec![SIDE, SIDE], vec![CHUNK, CHUNK]);
        meta.codecs = NamedConfig::parse_list(&json!([
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "zstd", "configuration": {"level": 1, "checksum": false}}
        ]))
        .expect("valid codecs");
        Array::create(db.store(), PATH, meta).map(drop)
    }

    fn run_transaction(db: &Database, k: u64) -> Result<(), Error> {
        let [rows, cols] = region(k);
        let values: Vec<u32> = (0..rows).flat_map(|row| (0..cols).map(move |col| value(k, row, col))).collect();
        // On the auto-commit store: one region write is one commit, streamed.
        Array::open(db.store(), PATH)?.write_region(&[0, 0], &[rows, cols], &values)
    }

    fn verify(&self, db: &Database) -> Result<(), String> {
        let snapshot = db.begin_read().map_err(|e| e.to_string())?;
        let array = Array::open(snapshot.store(), PATH).map_err(|e| format!("{PATH}: {e}"))?;
        let bytes: Vec<u8> = self.values.iter().flat_map(|v| v.to_le_bytes()).collect();
        verify_array_bytes(&array, &bytes)
    }
}
