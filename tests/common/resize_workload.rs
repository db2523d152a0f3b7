//! The workload of `tests/crash_resize_append.rs`: transactions that change the shapes of arrays.
//! Resizes and appends rewrite `zarr.json` and trim or add chunks in the same transaction, so a
//! crash in the middle of one could leave a shape that disagrees with the chunks (keys outside
//! the grid, old data beyond the shape that a later growth brings back) or an append whose shape
//! is there without its data; this workload gives a crash many chances to.
//!
//! Nodes: the group `/r` with four arrays of different rank, type, fill value, codecs and chunk
//! key encoding (see [`SPECS`]), and the group `/g`. Transaction `k` does two to five operations
//! on at least two arrays: appends along a random axis (typed for `x`, bytes for the others),
//! resizes (every dimension may grow or shrink, down to zero), region writes (a third of them
//! with the fill value, so chunks are erased); and it sets the attributes of one array
//! (`{"set_by": k}`) and of `/g` (`{"txn": k}`) at random points in between. The operations
//! depend on `k` and on the shapes the transactions before it left, which the child reads from
//! the database and the parent takes from its model.

use serde_json::{json, Map, Value};
use zarrdb::metadata::{ChunkKeyEncoding, NamedConfig, Separator};
use zarrdb::{Array, ArrayMetadata, DataType, Database, Error, FillValue, Group};

use super::crash_harness::checks::{attrs, for_each_index, verify_array_bytes};
use super::crash_harness::splitmix::SplitMix;
use super::crash_harness::Workload;

const SEED: u64 = 0x7e51_2e5a;

/// An array of the workload.
pub struct Spec {
    pub path: &'static str,
    data_type: DataType,
    /// The shape after setup.
    shape: &'static [u64],
    chunks: &'static [u64],
    /// No dimension grows beyond this; an append that would is a shrink instead.
    max: &'static [u64],
    fill: i64,
}

const X: usize = 0;

/// `x`: plain bytes; `y`: zstd and crc32c; `z`: gzip and v2 keys (`1.0.2`); `w`: shards of 8x8
/// in 4x4 inner chunks.
pub const SPECS: [Spec; 4] = [
    Spec { path: "/r/x", data_type: DataType::Int32, shape: &[20, 30], chunks: &[8, 8], max: &[48, 48], fill: 0 },
    Spec { path: "/r/y", data_type: DataType::Float64, shape: &[50], chunks: &[16], max: &[200], fill: -3 },
    Spec {
        path: "/r/z",
        data_type: DataType::UInt16,
        shape: &[6, 10, 12],
        chunks: &[4, 4, 5],
        max: &[16, 16, 16],
        fill: 7,
    },
    Spec { path: "/r/w", data_type: DataType::Int64, shape: &[16, 16], chunks: &[8, 8], max: &[40, 40], fill: -1 },
];

/// Model values are `i64`s that every data type of [`SPECS`] holds exactly.
fn encode(data_type: DataType, values: &[i64]) -> Vec<u8> {
    match data_type {
        DataType::Int32 => values.iter().flat_map(|v| (*v as i32).to_le_bytes()).collect(),
        DataType::Float64 => values.iter().flat_map(|v| (*v as f64).to_le_bytes()).collect(),
        DataType::UInt16 => values.iter().flat_map(|v| (*v as u16).to_le_bytes()).collect(),
        DataType::Int64 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        other => unreachable!("no array of the workload is {other:?}"),
    }
}

/// One operation of a transaction.
enum Op {
    Resize { array: usize, shape: Vec<u64> },
    Append { array: usize, axis: usize, block: Vec<u64>, values: Vec<i64> },
    Write { array: usize, at: Vec<u64>, shape: Vec<u64>, values: Vec<i64> },
    SetAttributes { array: usize },
    MarkGroup,
}

/// `n` values for an array: all fill a third of the time, random otherwise.
fn values(rng: &mut SplitMix, spec: &Spec, n: u64) -> Vec<i64> {
    let fill = rng.range(0, 2) == 0;
    let mut value = || match spec.data_type {
        _ if fill => spec.fill,
        DataType::UInt16 => rng.range(0, u64::from(u16::MAX)) as i64,
        DataType::Int32 => rng.nonzero(1 << 30),
        _ => rng.nonzero(1 << 50),
    };
    (0..n).map(|_| value()).collect()
}

/// The operation on `array` of shape `shape` (updated to the shape after it).
fn operation(rng: &mut SplitMix, array: usize, shape: &mut [u64]) -> Op {
    let spec = &SPECS[array];
    let kind = rng.range(0, 9);
    if kind <= 3 {
        let axis = rng.range(0, shape.len() as u64 - 1) as usize;
        let len = rng.range(1, spec.chunks[axis] + 3);
        if shape[axis] + len <= spec.max[axis] {
            let mut block = shape.to_vec();
            block[axis] = len;
            shape[axis] += len;
            let values = values(rng, spec, block.iter().product());
            return Op::Append { array, axis, block, values };
        }
        shape[axis] = rng.range(0, spec.max[axis] / 3);
        return Op::Resize { array, shape: shape.to_vec() };
    }
    if kind <= 6 || shape.contains(&0) {
        for (d, len) in shape.iter_mut().enumerate() {
            if rng.next_u64() & 1 == 0 {
                *len = rng.range(0, spec.max[d]);
            }
        }
        return Op::Resize { array, shape: shape.to_vec() };
    }
    let region: Vec<u64> = (0..shape.len()).map(|d| rng.range(1, shape[d].min(2 * spec.chunks[d]))).collect();
    let at = (0..shape.len()).map(|d| rng.range(0, shape[d] - region[d])).collect();
    let values = values(rng, spec, region.iter().product());
    Op::Write { array, at, shape: region, values }
}

/// The operations of transaction `k` on arrays of `shapes` (the shapes the transaction before it
/// left; updated to the shapes after it).
fn plan(k: u64, shapes: &mut [Vec<u64>]) -> Vec<Op> {
    let mut rng = SplitMix::new(SEED, k);
    let first = rng.range(0, 3) as usize;
    let second = (first + rng.range(1, 3) as usize) % SPECS.len();
    let mut ops = Vec::new();
    for i in 0..rng.range(2, 5) {
        let array = match i {
            0 => first,
            1 => second,
            _ => rng.range(0, 3) as usize,
        };
        ops.push(operation(&mut rng, array, &mut shapes[array]));
    }
    let array = rng.range(0, 3) as usize;
    ops.insert(rng.range(0, ops.len() as u64) as usize, Op::SetAttributes { array });
    ops.insert(rng.range(0, ops.len() as u64) as usize, Op::MarkGroup);
    ops
}

/// The flat C-order indices of the box at `at` of `size` in an array of `shape`.
fn box_indices(shape: &[u64], at: &[u64], size: &[u64]) -> Vec<usize> {
    let mut out = Vec::new();
    for_each_index(size, |i| {
        out.push(i.iter().zip(at).zip(shape).fold(0, |flat, ((i, a), s)| flat * s + i + a) as usize);
    });
    out
}

/// One array of the model.
struct ModelArray {
    shape: Vec<u64>,
    /// C-order values at `shape`.
    data: Vec<i64>,
    attributes: Map<String, Value>,
}

impl ModelArray {
    /// What `Array::resize` promises: the part inside both shapes stays, the rest is fill.
    fn resize(&mut self, shape: &[u64], fill: i64) {
        let keep: Vec<u64> = self.shape.iter().zip(shape).map(|(o, n)| *o.min(n)).collect();
        let origin = vec![0; shape.len()];
        let mut data = vec![fill; shape.iter().product::<u64>() as usize];
        for (old, new) in box_indices(&self.shape, &origin, &keep).into_iter().zip(box_indices(shape, &origin, &keep)) {
            data[new] = self.data[old];
        }
        (self.shape, self.data) = (shape.to_vec(), data);
    }

    fn write(&mut self, at: &[u64], size: &[u64], values: &[i64]) {
        for (i, v) in box_indices(&self.shape, at, size).into_iter().zip(values) {
            self.data[i] = *v;
        }
    }
}

/// The content of the database after transactions `1..=txn`.
pub struct Model {
    txn: u64,
    arrays: Vec<ModelArray>,
}

impl Workload for Model {
    fn setup(db: &Database) -> Result<(), Error> {
        let txn = db.begin_write()?;
        let s = txn.store();
        Group::create(s.clone(), "/r", Map::new())?;
        Group::create(s.clone(), "/g", attrs(json!({"txn": 0})))?;
        for (i, spec) in SPECS.iter().enumerate() {
            let mut meta = ArrayMetadata::new(spec.data_type.clone(), spec.shape.to_vec(), spec.chunks.to_vec());
            meta.fill_value = FillValue::from_le_bytes(encode(spec.data_type.clone(), &[spec.fill]));
            let codecs = match i {
                1 => json!([{"name": "bytes", "configuration": {"endian": "little"}},
                            {"name": "zstd", "configuration": {"level": 1, "checksum": false}}, {"name": "crc32c"}]),
                2 => json!([{"name": "bytes", "configuration": {"endian": "little"}},
                            {"name": "gzip", "configuration": {"level": 1}}]),
                3 => json!([{"name": "sharding_indexed", "configuration": {
                    "chunk_shape": [4, 4],
                    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                    "index_location": "end"
                }}]),
                _ => Value::Null,
            };
            if !codecs.is_null() {
                meta.codecs = NamedConfig::parse_list(&codecs).expect("valid codecs");
            }
            if i == 2 {
                meta.chunk_key_encoding = ChunkKeyEncoding::V2(Separator::Dot);
            }
            Array::create(s.clone(), spec.path, meta)?;
        }
        txn.commit()
    }

    fn run_transaction(db: &Database, k: u64) -> Result<(), Error> {
        let txn = db.begin_write()?;
        let s = txn.store();
        // One handle per array for the whole transaction: each operation updates its metadata.
        let mut arrays: Vec<Array> =
            SPECS.iter().map(|spec| Array::open(s.clone(), spec.path)).collect::<Result<_, _>>()?;
        let mut shapes: Vec<Vec<u64>> = arrays.iter().map(|a| a.shape().to_vec()).collect();
        for op in plan(k, &mut shapes) {
            match op {
                Op::Resize { array, shape } => arrays[array].resize(&shape)?,
                Op::Append { array, axis, block, values } => {
                    let a = &mut arrays[array];
                    let shape = if array == X {
                        let typed: Vec<i32> = values.iter().map(|v| *v as i32).collect();
                        a.append(axis, &block, &typed)?
                    } else {
                        a.append_bytes(axis, &block, &encode(SPECS[array].data_type.clone(), &values))?
                    };
                    assert_eq!(shape, a.shape(), "{}: append returned another shape than the handle's", a.path());
                }
                Op::Write { array, at, shape, values } => {
                    arrays[array].write_region_bytes(&at, &shape, &encode(SPECS[array].data_type.clone(), &values))?;
                }
                Op::SetAttributes { array } => arrays[array].set_attributes(attrs(json!({"set_by": k})))?,
                Op::MarkGroup => Group::open(s.clone(), "/g")?.set_attributes(attrs(json!({"txn": k})))?,
            }
        }
        for (a, shape) in arrays.iter().zip(&shapes) {
            assert_eq!(a.shape(), shape.as_slice(), "{}: the handle's shape is not the plan's", a.path());
        }
        txn.commit()
    }

    fn initial() -> Model {
        let arrays = SPECS
            .iter()
            .map(|spec| ModelArray {
                shape: spec.shape.to_vec(),
                data: vec![spec.fill; spec.shape.iter().product::<u64>() as usize],
                attributes: Map::new(),
            })
            .collect();
        Model { txn: 0, arrays }
    }

    fn txn(&self) -> u64 {
        self.txn
    }

    fn replay_next(&mut self) {
        self.txn += 1;
        let mut shapes: Vec<Vec<u64>> = self.arrays.iter().map(|a| a.shape.clone()).collect();
        for op in plan(self.txn, &mut shapes) {
            match op {
                Op::Resize { array, shape } => self.arrays[array].resize(&shape, SPECS[array].fill),
                Op::Append { array, axis, block, values } => {
                    let m = &mut self.arrays[array];
                    let (mut shape, mut at) = (m.shape.clone(), vec![0; m.shape.len()]);
                    (shape[axis], at[axis]) = (m.shape[axis] + block[axis], m.shape[axis]);
                    m.resize(&shape, SPECS[array].fill);
                    m.write(&at, &block, &values);
                }
                Op::Write { array, at, shape, values } => self.arrays[array].write(&at, &shape, &values),
                Op::SetAttributes { array } => self.arrays[array].attributes = attrs(json!({"set_by": self.txn})),
                Op::MarkGroup => {}
            }
        }
    }

    /// Also grows every array to its maximum in a transaction that is then aborted: what a
    /// crash left beyond the shapes must read as fill value then too.
    fn verify(&self, db: &Database) -> Result<(), String> {
        let snapshot = db.begin_read().map_err(|e| e.to_string())?;
        let s = snapshot.store();
        let names =
            |path: &str| Group::open(s.clone(), path).and_then(|g| g.child_names()).map_err(|e| format!("{path}: {e}"));
        if names("/")? != ["g", "r"] || names("/r")? != ["w", "x", "y", "z"] {
            return Err(format!("unexpected nodes: / holds {:?}, /r holds {:?}", names("/")?, names("/r")?));
        }
        let g = Group::open(s.clone(), "/g").map_err(|e| e.to_string())?.attributes();
        if g != attrs(json!({"txn": self.txn})) {
            return Err(format!("/g attributes {g:?}, expected txn {}", self.txn));
        }
        for (spec, m) in SPECS.iter().zip(&self.arrays) {
            let a = Array::open(s.clone(), spec.path).map_err(|e| format!("{}: {e}", spec.path))?;
            if a.shape() != m.shape || *a.attributes() != m.attributes {
                return Err(format!(
                    "{}: shape {:?} and attributes {:?}, expected {:?} and {:?}",
                    spec.path,
                    a.shape(),
                    a.attributes(),
                    m.shape,
                    m.attributes
                ));
            }
            verify_array_bytes(&a, &encode(spec.data_type.clone(), &m.data))?;
        }
        drop(snapshot);
        self.verify_regrown(db)
    }

    fn node_counts(&self) -> (usize, usize) {
        // `/`, `/g`, `/r`; the arrays of `/r`.
        (3, SPECS.len())
    }
}

impl Model {
    /// Grow every array to its maximum shape in a transaction, compare with the model grown the
    /// same way, and abort.
    fn verify_regrown(&self, db: &Database) -> Result<(), String> {
        let txn = db.begin_write().map_err(|e| e.to_string())?;
        for (spec, m) in SPECS.iter().zip(&self.arrays) {
            let mut a = Array::open(txn.store(), spec.path).map_err(|e| format!("{}: {e}", spec.path))?;
            a.resize(spec.max).map_err(|e| format!("{}: growing to {:?}: {e}", spec.path, spec.max))?;
            let mut grown = ModelArray { shape: m.shape.clone(), data: m.data.clone(), attributes: Map::new() };
            grown.resize(spec.max, spec.fill);
            verify_array_bytes(&a, &encode(spec.data_type.clone(), &grown.data))
                .map_err(|e| format!("after growing from {:?} to {:?}: {e}", m.shape, spec.max))?;
        }
        txn.abort();
        Ok(())
    }
}
