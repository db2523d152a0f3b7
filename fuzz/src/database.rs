//! Target `database`: a real database (redb, LMDB or sled, in `/dev/shm` where there is one)
//! driven through a sequence of operations in transactions, against a model: the arrays' shapes
//! and contents and a group's attributes in a `BTreeMap` (as redb's own `fuzz_redb` checks redb
//! against one). After every commit, abort and reopen, what the database holds must equal the
//! model; inside a transaction, a read must equal the transaction's model.
//!
//! Input: a configuration byte (bits 0-1: backend, redb, LMDB or sled; bit 2: fast commits instead
//! of durable ones), then operations, each an opcode byte and its arguments (see [`Op::parse`]).
//! An operation's outcome is known from the model: a valid one must succeed, and creating an
//! array that exists, or writing outside an array, must fail and change nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::{json, Map, Value};
use zarrdb::metadata::NamedConfig;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Durability, Error, Group, Node, Store, Transaction};

/// The arrays a sequence works on (one under a group that comes and goes with it).
pub const ARRAYS: [&str; 3] = ["/a", "/b", "/g/c"];
/// The group whose attributes the model holds.
pub const GROUP: &str = "/h";
/// Operations per input, at most: longer inputs are cut, so that each runs in milliseconds.
pub const MAX_OPS: usize = 48;
/// The largest dimension of an array.
const MAX_DIM: u64 = 12;

/// One array as the model holds it: uint8, fill value 0, C order.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelArray {
    shape: [u64; 2],
    data: Vec<u8>,
}

impl ModelArray {
    fn zeros(shape: [u64; 2]) -> ModelArray {
        ModelArray { shape, data: vec![0; (shape[0] * shape[1]) as usize] }
    }

    /// The array with shape `shape`: what lies in both shapes kept, the rest fill.
    fn resized(&self, shape: [u64; 2]) -> ModelArray {
        let mut out = ModelArray::zeros(shape);
        for r in 0..self.shape[0].min(shape[0]) {
            for c in 0..self.shape[1].min(shape[1]) {
                out.data[(r * shape[1] + c) as usize] = self.data[(r * self.shape[1] + c) as usize];
            }
        }
        out
    }
}

/// The model: arrays by path and the group's attributes (`None`: no group).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model {
    arrays: BTreeMap<&'static str, ModelArray>,
    group: Option<Map<String, Value>>,
}

/// One operation, its arguments already bounded.
#[derive(Clone, Debug)]
pub enum Op {
    /// Create array `ARRAYS[.0]` with shape `.1`, chunks `.2` and codecs `.3` (0: bytes, 1: bytes
    /// and zstd, 2: sharding with inner chunks of one row).
    Create(usize, [u64; 2], [u64; 2], u8),
    /// Write the region at `.1` of shape `.2`, values counting up from `.3`.
    Write(usize, [u64; 2], [u64; 2], u8),
    /// Resize to `.1`.
    Resize(usize, [u64; 2]),
    /// Append `.2` rows (axis 0) or columns (axis 1) of value `.3` along axis `.1`.
    Append(usize, usize, u64, u8),
    /// Erase the array.
    Erase(usize),
    /// Erase the group `/g` and everything under it.
    EraseG,
    /// Rename array `.0` to path `.1`.
    Rename(usize, usize),
    /// Create the group, or set its attributes when it exists, to `{"v": .0}`.
    SetGroup(u8),
    /// Read one array inside the transaction.
    Read(usize),
    /// Commit the transaction.
    Commit,
    /// Abort it.
    Abort,
    /// Close the database and open it again.
    Reopen,
}

impl Op {
    /// The operations `data` spells: each an opcode byte, then its argument bytes (missing ones
    /// read as 0). Arguments are bounded here: dimensions up to [`MAX_DIM`], chunks up to 6.
    pub fn parse(data: &[u8]) -> Vec<Op> {
        let mut bytes = data.iter().copied();
        let mut next = move || bytes.next();
        let mut ops = Vec::new();
        while let Some(code) = next() {
            if ops.len() == MAX_OPS {
                break;
            }
            let mut arg = || next().unwrap_or(0);
            let array = |b: u8| usize::from(b) % ARRAYS.len();
            let dim = |b: u8| u64::from(b) % (MAX_DIM + 1);
            let op = match code % 12 {
                0 => {
                    let i = array(arg());
                    let shape = [dim(arg()), dim(arg())];
                    let chunks = [1 + u64::from(arg()) % 6, 1 + u64::from(arg()) % 6];
                    Op::Create(i, shape, chunks, arg() % 3)
                }
                1 => Op::Write(array(arg()), [dim(arg()), dim(arg())], [dim(arg()), dim(arg())], arg()),
                2 => Op::Resize(array(arg()), [dim(arg()), dim(arg())]),
                3 => Op::Append(array(arg()), usize::from(arg() % 2), u64::from(arg() % 4), arg()),
                4 => Op::Erase(array(arg())),
                5 => Op::EraseG,
                6 => Op::Rename(array(arg()), array(arg())),
                7 => Op::SetGroup(arg()),
                8 => Op::Read(array(arg())),
                9 => Op::Commit,
                10 => Op::Abort,
                _ => Op::Reopen,
            };
            ops.push(op);
        }
        ops
    }

    /// The opcode and argument bytes of `self` (the inverse of [`Op::parse`]), to write seeds.
    pub fn encode(&self) -> Vec<u8> {
        let d = |v: u64| v as u8;
        match *self {
            Op::Create(i, s, c, k) => vec![0, i as u8, d(s[0]), d(s[1]), d(c[0] - 1), d(c[1] - 1), k],
            Op::Write(i, o, s, v) => vec![1, i as u8, d(o[0]), d(o[1]), d(s[0]), d(s[1]), v],
            Op::Resize(i, s) => vec![2, i as u8, d(s[0]), d(s[1])],
            Op::Append(i, axis, n, v) => vec![3, i as u8, axis as u8, d(n), v],
            Op::Erase(i) => vec![4, i as u8],
            Op::EraseG => vec![5],
            Op::Rename(i, j) => vec![6, i as u8, j as u8],
            Op::SetGroup(v) => vec![7, v],
            Op::Read(i) => vec![8, i as u8],
            Op::Commit => vec![9],
            Op::Abort => vec![10],
            Op::Reopen => vec![11],
        }
    }
}

/// Where this process's databases go: in memory (`/dev/shm`) where there is one.
pub(crate) fn folder() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        let made = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() };
        made.expect("a temporary folder for the fuzzed databases")
    })
    .path()
}

struct Config {
    backend: Backend,
    durability: Durability,
    path: PathBuf,
}

impl Config {
    fn open(&self, create: bool) -> Database {
        let mut builder = Database::builder();
        builder.backend(self.backend).durability(self.durability);
        let db = if create { builder.create(&self.path) } else { builder.open(&self.path) };
        db.unwrap_or_else(|e| panic!("{:?} database at {}: {e}", self.backend, self.path.display()))
    }
}

fn metadata(shape: [u64; 2], chunks: [u64; 2], codecs: u8) -> ArrayMetadata {
    let mut meta = ArrayMetadata::new(DataType::UInt8, shape.to_vec(), chunks.to_vec());
    let le = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let list = match codecs {
        0 => json!([le]),
        1 => json!([le, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]),
        _ => json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [1, chunks[1]], "codecs": [le],
            "index_codecs": [le, {"name": "crc32c"}], "index_location": "end"}}]),
    };
    meta.codecs = NamedConfig::parse_list(&list).expect("the target's codec chains are valid");
    meta
}

/// What `store` holds, as the model sees it.
fn read(store: &Arc<dyn Store>) -> Result<Model, Error> {
    let mut model = Model::default();
    for path in ARRAYS {
        if let Some(array) = read_array(store, path)? {
            model.arrays.insert(path, array);
        }
    }
    model.group = match Node::open(store.clone(), GROUP) {
        Ok(Node::Group(g)) if !g.is_implicit() => Some(g.attributes()),
        Ok(_) => None,
        Err(Error::Node(zarrdb::error::NodeError::NotFound { .. })) => None,
        Err(e) => return Err(e),
    };
    Ok(model)
}

fn read_array(store: &Arc<dyn Store>, path: &str) -> Result<Option<ModelArray>, Error> {
    match Array::open(store.clone(), path) {
        Ok(array) => {
            let shape = [array.shape()[0], array.shape()[1]];
            Ok(Some(ModelArray { shape, data: array.read_all::<u8>()? }))
        }
        Err(Error::Node(zarrdb::error::NodeError::NotFound { .. })) => Ok(None),
        Err(e) => Err(e),
    }
}

fn check(store: &Arc<dyn Store>, model: &Model, when: &str) {
    let got = read(store).unwrap_or_else(|e| panic!("{when}: the database cannot be read: {e}"));
    assert_eq!(&got, model, "{when}: the database does not hold what the model does");
}

/// Apply `op` inside `txn` and to `model`.
fn apply(txn: &Transaction, model: &mut Model, op: &Op) {
    let store = txn.store();
    match *op {
        Op::Create(i, shape, chunks, codecs) => {
            let made = Array::create(store, ARRAYS[i], metadata(shape, chunks, codecs));
            if model.arrays.contains_key(ARRAYS[i]) {
                assert!(made.is_err(), "{op:?}: an array was created over an existing one");
            } else {
                made.unwrap_or_else(|e| panic!("{op:?}: {e}"));
                model.arrays.insert(ARRAYS[i], ModelArray::zeros(shape));
            }
        }
        Op::Write(i, offset, shape, v) => {
            let Some(m) = model.arrays.get_mut(ARRAYS[i]) else { return };
            let array = Array::open(store, ARRAYS[i]).unwrap_or_else(|e| panic!("{op:?}: open: {e}"));
            let values: Vec<u8> = (0..shape[0] * shape[1]).map(|k| v.wrapping_add(k as u8)).collect();
            let result = array.write_region(&offset, &shape, &values);
            if offset[0] + shape[0] > m.shape[0] || offset[1] + shape[1] > m.shape[1] {
                assert!(result.is_err(), "{op:?}: a write outside the array {:?} succeeded", m.shape);
                return;
            }
            result.unwrap_or_else(|e| panic!("{op:?}: {e}"));
            for r in 0..shape[0] {
                for c in 0..shape[1] {
                    m.data[((offset[0] + r) * m.shape[1] + offset[1] + c) as usize] =
                        values[(r * shape[1] + c) as usize];
                }
            }
        }
        Op::Resize(i, shape) => {
            let Some(m) = model.arrays.get_mut(ARRAYS[i]) else { return };
            let mut array = Array::open(store, ARRAYS[i]).unwrap_or_else(|e| panic!("{op:?}: open: {e}"));
            array.resize(&shape).unwrap_or_else(|e| panic!("{op:?}: {e}"));
            *m = m.resized(shape);
        }
        Op::Append(i, axis, n, v) => {
            let Some(m) = model.arrays.get_mut(ARRAYS[i]) else { return };
            let mut array = Array::open(store, ARRAYS[i]).unwrap_or_else(|e| panic!("{op:?}: open: {e}"));
            let mut block = m.shape;
            block[axis] = n;
            let values = vec![v; (block[0] * block[1]) as usize];
            let mut grown = m.shape;
            grown[axis] += n;
            let shape = array.append(axis, &block, &values).unwrap_or_else(|e| panic!("{op:?}: {e}"));
            assert_eq!(shape, grown.to_vec(), "{op:?}: the shape after an append");
            let mut next = m.resized(grown);
            for r in 0..grown[0] {
                for c in 0..grown[1] {
                    if r >= m.shape[0] || c >= m.shape[1] {
                        next.data[(r * grown[1] + c) as usize] = v;
                    }
                }
            }
            *m = next;
        }
        Op::Erase(i) => {
            if model.arrays.remove(ARRAYS[i]).is_some() {
                Node::erase(store, ARRAYS[i]).unwrap_or_else(|e| panic!("{op:?}: {e}"));
            }
        }
        Op::EraseG => {
            if model.arrays.remove("/g/c").is_some() {
                Node::erase(store, "/g").unwrap_or_else(|e| panic!("{op:?}: {e}"));
            }
        }
        Op::Rename(i, j) => {
            if i == j || !model.arrays.contains_key(ARRAYS[i]) || model.arrays.contains_key(ARRAYS[j]) {
                return;
            }
            Node::rename(store, ARRAYS[i], ARRAYS[j]).unwrap_or_else(|e| panic!("{op:?}: {e}"));
            let moved = model.arrays.remove(ARRAYS[i]).expect("checked above");
            model.arrays.insert(ARRAYS[j], moved);
        }
        Op::SetGroup(v) => {
            let mut attributes = Map::new();
            attributes.insert("v".to_owned(), v.into());
            match model.group {
                None => {
                    Group::create(store, GROUP, attributes.clone()).unwrap_or_else(|e| panic!("{op:?}: {e}"));
                }
                Some(_) => {
                    let mut group = Group::open(store, GROUP).unwrap_or_else(|e| panic!("{op:?}: open: {e}"));
                    group.set_attributes(attributes.clone()).unwrap_or_else(|e| panic!("{op:?}: {e}"));
                }
            }
            model.group = Some(attributes);
        }
        Op::Read(i) => {
            let got = read_array(&store, ARRAYS[i]).unwrap_or_else(|e| panic!("{op:?}: {e}"));
            assert_eq!(got.as_ref(), model.arrays.get(ARRAYS[i]), "{op:?}: a read inside the transaction");
        }
        Op::Commit | Op::Abort | Op::Reopen => unreachable!("handled by run"),
    }
}

/// One input.
pub fn run(data: &[u8]) {
    let Some((&c, rest)) = data.split_first() else { return };
    let backend = match c & 3 {
        1 => Backend::Lmdb,
        2 => Backend::Sled,
        _ => Backend::Redb,
    };
    let durability = if c & 4 == 0 { Durability::Durable } else { Durability::Fast };
    let config = Config { backend, durability, path: folder().join("db") };
    // Whatever an earlier input left (a crash is the end of the process, not of an input).
    let _ = std::fs::remove_dir_all(&config.path);
    let _ = std::fs::remove_file(&config.path);
    let mut db = Some(config.open(true));
    let mut committed = Model::default();
    let mut txn: Option<(Transaction, Model)> = None;
    for op in Op::parse(rest) {
        match op {
            Op::Commit => {
                let Some((t, model)) = txn.take() else { continue };
                t.commit().unwrap_or_else(|e| panic!("commit: {e}"));
                committed = model;
                check(&db.as_ref().expect("open").store(), &committed, "after a commit");
            }
            Op::Abort => {
                if txn.take().is_some() {
                    check(&db.as_ref().expect("open").store(), &committed, "after an abort");
                }
            }
            Op::Reopen => {
                txn = None;
                drop(db.take());
                let again = config.open(false);
                check(&again.store(), &committed, "after a reopen");
                db = Some(again);
            }
            op => {
                if txn.is_none() {
                    let t = db.as_ref().expect("open").begin_write().unwrap_or_else(|e| panic!("begin_write: {e}"));
                    txn = Some((t, committed.clone()));
                }
                let (t, model) = txn.as_mut().expect("begun above");
                apply(t, model, &op);
            }
        }
    }
    drop(txn);
    drop(db);
}
