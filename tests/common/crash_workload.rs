//! The workload of `tests/crash_transactions.rs`. Transaction `k` is generated from `k` alone, so
//! the process that runs it and the process that checks the database after a crash agree on what
//! every prefix of the transactions leaves behind ([`Model`]).
//!
//! Nodes: `/data/a` (int64 48x48 in 16x16 chunks, plain bytes), `/data/b` (int32 40x40 in 8x8
//! chunks, zstd + crc32c), `/data/c` (float64 1024 in shards of 256 of 32-element gzip chunks with
//! a crc32c index), the group `/extra` and the group `/g`. Transaction `k` adds deltas to regions
//! of `a`, overwrites regions of `b` and `c` (a third of the time with zeros, so chunks are erased),
//! creates the array `/extra/e{k}` every 25th transaction, and sets the attributes of `a`
//! (`{"last_txn": k}`) and of `g` (`{"txn": k, "sum_a": sum(a)}`): all in one transaction.

use serde_json::{json, Map};
use zarrdb::metadata::NamedConfig;
use zarrdb::{Array, ArrayMetadata, DataType, Database, Element, Error, Group};

use super::crash_harness::checks::{attrs, verify_array_bytes};
use super::crash_harness::splitmix::SplitMix;
use super::crash_harness::Workload;

const SEED: u64 = 0xc4a5_4e57;
const A: (&str, [u64; 2], [u64; 2]) = ("/data/a", [48, 48], [16, 16]);
const B: (&str, [u64; 2], [u64; 2]) = ("/data/b", [40, 40], [8, 8]);
const C: (&str, u64, u64) = ("/data/c", 1024, 256);
const EXTRA_EVERY: u64 = 25;

/// One write of a transaction.
enum Op {
    AddA { at: [u64; 2], shape: [u64; 2], delta: i64 },
    SetB { at: [u64; 2], shape: [u64; 2], values: Vec<i32> },
    SetC { at: u64, values: Vec<f64> },
    CreateExtra,
}

fn square(rng: &mut SplitMix, side: [u64; 2]) -> ([u64; 2], [u64; 2]) {
    let shape = [rng.range(1, 20), rng.range(1, 20)];
    ([rng.range(0, side[0] - shape[0]), rng.range(0, side[1] - shape[1])], shape)
}

/// The writes of transaction `k`.
fn plan(k: u64) -> Vec<Op> {
    let mut rng = SplitMix::new(SEED, k);
    let mut ops = Vec::new();
    for _ in 0..rng.range(1, 3) {
        let (at, shape) = square(&mut rng, A.1);
        ops.push(Op::AddA { at, shape, delta: rng.nonzero(1_000_000) });
    }
    for _ in 0..rng.range(1, 2) {
        let (at, shape) = square(&mut rng, B.1);
        let zero = rng.range(0, 2) == 0;
        let values = (0..shape[0] * shape[1]).map(|_| if zero { 0 } else { rng.nonzero(1 << 30) as i32 }).collect();
        ops.push(Op::SetB { at, shape, values });
    }
    for _ in 0..rng.range(0, 2) {
        let len = rng.range(1, 300);
        let at = rng.range(0, C.1 - len);
        let zero = rng.range(0, 2) == 0;
        ops.push(Op::SetC {
            at,
            values: (0..len).map(|i| if zero { 0.0 } else { (k * 1000 + i) as f64 / 4.0 }).collect(),
        });
    }
    if k % EXTRA_EVERY == 0 {
        ops.push(Op::CreateExtra);
    }
    ops
}

fn extra_values(k: u64) -> Vec<u8> {
    (0..16).map(|i| ((k + i) % 255 + 1) as u8).collect()
}

/// Row-major indices of a region of a 2-d array with `cols` columns.
fn cells(at: [u64; 2], shape: [u64; 2], cols: u64) -> impl Iterator<Item = usize> {
    (at[0]..at[0] + shape[0]).flat_map(move |r| (at[1]..at[1] + shape[1]).map(move |c| (r * cols + c) as usize))
}

/// `crash_checks::verify_array_bytes` with typed elements.
fn verify_array<T: Element>(array: &Array, expected: &[T]) -> Result<(), String> {
    verify_array_bytes(array, &T::to_le_bytes(expected))
}

/// The content of the database after transactions `1..=txn`.
pub struct Model {
    txn: u64,
    a: Vec<i64>,
    b: Vec<i32>,
    c: Vec<f64>,
}

impl Model {
    fn extras(&self) -> Vec<u64> {
        (1..=self.txn / EXTRA_EVERY).map(|i| i * EXTRA_EVERY).collect()
    }
}

impl Workload for Model {
    fn initial() -> Model {
        let n = |s: [u64; 2]| (s[0] * s[1]) as usize;
        Model { txn: 0, a: vec![0; n(A.1)], b: vec![0; n(B.1)], c: vec![0.0; C.1 as usize] }
    }

    fn txn(&self) -> u64 {
        self.txn
    }

    fn replay_next(&mut self) {
        self.txn += 1;
        for op in plan(self.txn) {
            match op {
                Op::AddA { at, shape, delta } => cells(at, shape, A.1[1]).for_each(|i| self.a[i] += delta),
                Op::SetB { at, shape, values } => {
                    cells(at, shape, B.1[1]).zip(values).for_each(|(i, v)| self.b[i] = v);
                }
                Op::SetC { at, values } => self.c[at as usize..][..values.len()].copy_from_slice(&values),
                Op::CreateExtra => {}
            }
        }
    }

    fn node_counts(&self) -> (usize, usize) {
        // `/`, `/data`, `/extra`, `/g`; `a`, `b`, `c` and the extra arrays.
        (4, 3 + self.extras().len())
    }

    fn setup(db: &Database) -> Result<(), Error> {
        let txn = db.begin_write()?;
        let s = txn.store();
        Array::create(s.clone(), A.0, ArrayMetadata::new(DataType::Int64, A.1.to_vec(), A.2.to_vec()))?;
        let mut b = ArrayMetadata::new(DataType::Int32, B.1.to_vec(), B.2.to_vec());
        b.codecs = NamedConfig::parse_list(&json!([
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "zstd", "configuration": {"level": 1, "checksum": false}},
            {"name": "crc32c"}
        ]))
        .expect("valid codecs");
        Array::create(s.clone(), B.0, b)?;
        let mut c = ArrayMetadata::new(DataType::Float64, vec![C.1], vec![C.2]);
        c.codecs = NamedConfig::parse_list(&json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [32],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"
        }}]))
        .expect("valid codecs");
        Array::create(s.clone(), C.0, c)?;
        Group::create(s.clone(), "/extra", Map::new())?;
        Group::create(s, "/g", attrs(json!({"txn": 0, "sum_a": 0})))?;
        txn.commit()
    }

    fn run_transaction(db: &Database, k: u64) -> Result<(), Error> {
        let txn = db.begin_write()?;
        let s = txn.store();
        let mut a = Array::open(s.clone(), A.0)?;
        let (b, c) = (Array::open(s.clone(), B.0)?, Array::open(s.clone(), C.0)?);
        for op in plan(k) {
            match op {
                Op::AddA { at, shape, delta } => {
                    let values: Vec<i64> = a.read_region::<i64>(&at, &shape)?.iter().map(|v| v + delta).collect();
                    a.write_region(&at, &shape, &values)?;
                }
                Op::SetB { at, shape, values } => b.write_region(&at, &shape, &values)?,
                Op::SetC { at, values } => c.write_region(&[at], &[values.len() as u64], &values)?,
                Op::CreateExtra => {
                    let meta = ArrayMetadata::new(DataType::UInt8, vec![16], vec![8]);
                    let extra = Array::create(s.clone(), &format!("/extra/e{k}"), meta)?;
                    extra.write_region(&[0], &[16], &extra_values(k))?;
                }
            }
        }
        let sum_a: i64 = a.read_all::<i64>()?.iter().sum();
        a.set_attributes(attrs(json!({"last_txn": k})))?;
        Group::open(s, "/g")?.set_attributes(attrs(json!({"txn": k, "sum_a": sum_a})))?;
        txn.commit()
    }

    fn verify(&self, db: &Database) -> Result<(), String> {
        let snapshot = db.begin_read().map_err(|e| e.to_string())?;
        let s = snapshot.store();
        let open = |path: &str| Array::open(s.clone(), path).map_err(|e| format!("{path}: {e}"));
        let names =
            |path: &str| Group::open(s.clone(), path).and_then(|g| g.child_names()).map_err(|e| format!("{path}: {e}"));
        if names("/")? != ["data", "extra", "g"] || names("/data")? != ["a", "b", "c"] {
            return Err(format!("unexpected nodes: / holds {:?}, /data holds {:?}", names("/")?, names("/data")?));
        }
        let sum_a: i64 = self.a.iter().sum();
        let g = Group::open(s.clone(), "/g").map_err(|e| e.to_string())?.attributes();
        if g != attrs(json!({"txn": self.txn, "sum_a": sum_a})) {
            return Err(format!("/g attributes {g:?}, expected txn {} and sum_a {sum_a}", self.txn));
        }
        let a = open(A.0)?;
        let a_attrs = if self.txn == 0 { Map::new() } else { attrs(json!({"last_txn": self.txn})) };
        if *a.attributes() != a_attrs {
            return Err(format!("{}: attributes {:?}, expected {a_attrs:?}", A.0, a.attributes()));
        }
        verify_array(&a, &self.a)?;
        verify_array(&open(B.0)?, &self.b)?;
        verify_array(&open(C.0)?, &self.c)?;
        let mut expected: Vec<String> = self.extras().iter().map(|k| format!("e{k}")).collect();
        expected.sort();
        if names("/extra")? != expected {
            return Err(format!("/extra holds {:?}, expected {expected:?}", names("/extra")?));
        }
        for k in self.extras() {
            verify_array(&open(&format!("/extra/e{k}"))?, &extra_values(k))?;
        }
        Ok(())
    }
}
