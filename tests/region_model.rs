//! Region I/O checked against an independent model: a plain in-memory n-d array (one `Vec<u8>` of
//! the whole array in C order, element bytes little endian) with its own index arithmetic.
//!
//! A property test draws a shape (rank 0..=4, lengths 0..=9), a chunk shape (chunks larger than
//! the array and chunks that do not divide it included), a data type, a fill value, the bytes
//! codec's endianness, a chunk key encoding, then a sequence of region writes and reads. After
//! every operation the library's answer is compared byte for byte with the model; after the
//! sequence the stored chunk keys must be exactly the chunks that hold a non-fill element, and a
//! reopened handle must read the same array.
//!
//! The model deliberately shares no code with zarrdb's region module: it walks every element of a
//! region one by one and computes flat indices with strides.

use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::Map;
use zarrdb::metadata::{ChunkKeyEncoding, NamedConfig, Separator};
use zarrdb::{Array, ArrayMetadata, DataType, DirectoryStore, FillValue, MemoryStore, Store};

/// Node path of the array under test (a nested path so chunk keys carry a prefix).
const ARRAY_PATH: &str = "/grp/arr";
/// Key prefix of that array in the store.
const KEY_PREFIX: &str = "grp/arr/";

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

/// A dense n-d array of fixed-size elements, C order.
#[derive(Clone, Debug)]
struct Model {
    shape: Vec<u64>,
    elem: usize,
    data: Vec<u8>,
}

/// Number of elements of a box (1 for rank 0).
fn count(shape: &[u64]) -> usize {
    shape.iter().map(|&n| n as usize).product()
}

/// Every multi-index of a box of `shape`, in C order (last index fastest). Rank 0 has one empty
/// index; a box with a zero length has none.
fn indices(shape: &[u64]) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    let total = count(shape);
    for mut linear in 0..total {
        // Decompose the linear position, last dimension fastest.
        let mut idx = vec![0u64; shape.len()];
        for d in (0..shape.len()).rev() {
            let n = shape[d] as usize;
            idx[d] = (linear % n) as u64;
            linear /= n;
        }
        out.push(idx);
    }
    out
}

impl Model {
    fn new(shape: &[u64], fill: &[u8]) -> Model {
        let n = count(shape);
        let mut data = Vec::with_capacity(n * fill.len());
        for _ in 0..n {
            data.extend_from_slice(fill);
        }
        Model { shape: shape.to_vec(), elem: fill.len(), data }
    }

    /// Flat element index of an array coordinate.
    fn flat(&self, coord: &[u64]) -> usize {
        assert_eq!(coord.len(), self.shape.len());
        let mut flat = 0usize;
        for (&c, &n) in coord.iter().zip(&self.shape) {
            assert!(c < n, "model index out of bounds");
            flat = flat * n as usize + c as usize;
        }
        flat
    }

    fn element(&self, coord: &[u64]) -> &[u8] {
        let f = self.flat(coord);
        &self.data[f * self.elem..(f + 1) * self.elem]
    }

    fn read(&self, offset: &[u64], shape: &[u64]) -> Vec<u8> {
        let mut out = Vec::with_capacity(count(shape) * self.elem);
        for idx in indices(shape) {
            let coord: Vec<u64> = idx.iter().zip(offset).map(|(i, o)| i + o).collect();
            out.extend_from_slice(self.element(&coord));
        }
        out
    }

    fn write(&mut self, offset: &[u64], shape: &[u64], bytes: &[u8]) {
        assert_eq!(bytes.len(), count(shape) * self.elem);
        for (k, idx) in indices(shape).into_iter().enumerate() {
            let coord: Vec<u64> = idx.iter().zip(offset).map(|(i, o)| i + o).collect();
            let f = self.flat(&coord);
            self.data[f * self.elem..(f + 1) * self.elem].copy_from_slice(&bytes[k * self.elem..(k + 1) * self.elem]);
        }
    }

    /// Grid coordinates of every chunk holding at least one element that differs from `fill`
    /// (bytewise) inside the array.
    fn non_fill_chunks(&self, chunk: &[u64], fill: &[u8]) -> BTreeSet<Vec<u64>> {
        let mut out = BTreeSet::new();
        for coord in indices(&self.shape) {
            if self.element(&coord) != fill {
                out.insert(coord.iter().zip(chunk).map(|(c, k)| c / k).collect());
            }
        }
        out
    }
}

/// The chunk key the spec prescribes, computed independently of zarrdb's encoder.
fn expected_key(encoding: ChunkKeyEncoding, coords: &[u64]) -> String {
    let parts: Vec<String> = coords.iter().map(|c| c.to_string()).collect();
    match encoding {
        ChunkKeyEncoding::Default(sep) => {
            let s = if sep == Separator::Slash { "/" } else { "." };
            if parts.is_empty() {
                "c".to_string()
            } else {
                format!("c{s}{}", parts.join(s))
            }
        }
        ChunkKeyEncoding::V2(sep) => {
            let s = if sep == Separator::Slash { "/" } else { "." };
            if parts.is_empty() {
                "0".to_string()
            } else {
                parts.join(s)
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------------

const DATA_TYPES: [DataType; 10] = [
    DataType::Bool,
    DataType::UInt8,
    DataType::Int16,
    DataType::Float16,
    DataType::Int32,
    DataType::Float32,
    DataType::Float64,
    DataType::Complex64,
    DataType::Complex128,
    DataType::Raw { bits: 24 },
];

#[derive(Clone, Debug)]
enum Op {
    /// Write `data` into the region; elements whose `fill_mask` entry is true are replaced by the
    /// fill value before writing (so writes can turn chunks back to all-fill).
    Write {
        offset: Vec<u64>,
        shape: Vec<u64>,
        data: Vec<u8>,
        fill_mask: Vec<bool>,
    },
    Read {
        offset: Vec<u64>,
        shape: Vec<u64>,
    },
}

#[derive(Clone, Debug)]
struct Case {
    shape: Vec<u64>,
    chunk: Vec<u64>,
    data_type: DataType,
    fill: Vec<u8>,
    /// The bytes codec's `endian` member; `None` only for one-byte-layout types (bool, uint8, raw).
    endian: Option<&'static str>,
    key_encoding: ChunkKeyEncoding,
    ops: Vec<Op>,
}

/// (dimension length, chunk length) pairs: lengths 0..=9 (0 now and then), chunk lengths
/// 1..=length+2 (1..=3 for length 0) so chunks larger than the array and non-dividing chunks both occur.
fn dims() -> impl Strategy<Value = Vec<(u64, u64)>> {
    let len = prop_oneof![1 => Just(0u64), 15 => 1u64..=9];
    let dim = len.prop_flat_map(|n| {
        let max_chunk = if n == 0 { 3 } else { n + 2 };
        (Just(n), 1u64..=max_chunk)
    });
    prop::collection::vec(dim, 0..=4)
}

fn is_bool(dt: &DataType) -> bool {
    *dt == DataType::Bool
}

/// One element's bytes: any bytes, or 0/1 for bool.
fn element(dt: &DataType) -> BoxedStrategy<Vec<u8>> {
    if is_bool(dt) {
        (0u8..=1).prop_map(|b| vec![b]).boxed()
    } else {
        prop::collection::vec(any::<u8>(), dt.size()).boxed()
    }
}

/// A region inside `shape`. Mostly non-empty regions (each length 1..=n-start, or the whole
/// dimension now and then); one time in eight any region, empty ones included (in a dimension of
/// length n: a start in 0..=n and a length in 0..=n-start).
fn region(shape: Vec<u64>) -> impl Strategy<Value = (Vec<u64>, Vec<u64>)> {
    let any_dim = |n: u64| (0..=n).prop_flat_map(move |start| (Just(start), 0..=n - start)).boxed();
    let non_empty_dim = |n: u64| {
        if n == 0 {
            Just((0u64, 0u64)).boxed()
        } else {
            prop_oneof![
                1 => Just((0, n)),
                3 => (0..n).prop_flat_map(move |start| (Just(start), 1..=n - start)),
            ]
            .boxed()
        }
    };
    let anything: Vec<_> = shape.iter().map(|&n| any_dim(n)).collect();
    let non_empty: Vec<_> = shape.iter().map(|&n| non_empty_dim(n)).collect();
    prop_oneof![1 => anything, 7 => non_empty].prop_map(|v| v.into_iter().unzip())
}

fn op(shape: Vec<u64>, dt: DataType) -> impl Strategy<Value = Op> {
    let write = region(shape.clone()).prop_flat_map(move |(offset, rshape)| {
        let n = count(&rshape);
        let data = prop::collection::vec(element(&dt), n).prop_map(|els| els.concat());
        let mask = prop_oneof![
            4 => Just(vec![false; n]),
            2 => prop::collection::vec(any::<bool>(), n),
            1 => Just(vec![true; n]),
        ];
        (Just(offset), Just(rshape), data, mask).prop_map(|(offset, shape, data, fill_mask)| Op::Write {
            offset,
            shape,
            data,
            fill_mask,
        })
    });
    let read = region(shape).prop_map(|(offset, shape)| Op::Read { offset, shape });
    prop_oneof![3 => write, 2 => read]
}

fn key_encoding() -> impl Strategy<Value = ChunkKeyEncoding> {
    prop_oneof![
        Just(ChunkKeyEncoding::Default(Separator::Slash)),
        Just(ChunkKeyEncoding::Default(Separator::Dot)),
        Just(ChunkKeyEncoding::V2(Separator::Dot)),
        Just(ChunkKeyEncoding::V2(Separator::Slash)),
    ]
}

fn endian(dt: DataType) -> BoxedStrategy<Option<&'static str>> {
    let one_byte_layout = matches!(dt, DataType::Bool | DataType::UInt8 | DataType::Raw { .. });
    if one_byte_layout {
        prop_oneof![Just(None), Just(Some("little")), Just(Some("big"))].boxed()
    } else {
        prop_oneof![Just(Some("little")), Just(Some("big"))].boxed()
    }
}

fn case() -> impl Strategy<Value = Case> {
    (dims(), prop::sample::select(&DATA_TYPES[..]), key_encoding()).prop_flat_map(|(dims, dt, key_encoding)| {
        let shape: Vec<u64> = dims.iter().map(|d| d.0).collect();
        let chunk: Vec<u64> = dims.iter().map(|d| d.1).collect();
        (element(&dt), endian(dt.clone()), prop::collection::vec(op(shape.clone(), dt.clone()), 1..8)).prop_map(
            move |(fill, endian, ops)| Case {
                shape: shape.clone(),
                chunk: chunk.clone(),
                data_type: dt.clone(),
                fill,
                endian,
                key_encoding,
                ops,
            },
        )
    })
}

// ---------------------------------------------------------------------------------------------
// Running a case
// ---------------------------------------------------------------------------------------------

fn metadata(case: &Case) -> ArrayMetadata {
    let mut meta = ArrayMetadata::new(case.data_type.clone(), case.shape.clone(), case.chunk.clone());
    meta.fill_value = FillValue::from_le_bytes(case.fill.clone());
    meta.chunk_key_encoding = case.key_encoding;
    meta.codecs = vec![match case.endian {
        None => NamedConfig::new("bytes"),
        Some(e) => {
            let mut config = Map::new();
            config.insert("endian".into(), e.into());
            NamedConfig::with_configuration("bytes", config)
        }
    }];
    meta
}

fn check<T: std::fmt::Debug>(r: Result<T, zarrdb::Error>, what: &str) -> Result<T, TestCaseError> {
    r.map_err(|e| TestCaseError::fail(format!("{what} failed: {e}")))
}

/// Full read of `array` equals the model.
fn full_read_matches(array: &Array, model: &Model, when: &str) -> Result<(), TestCaseError> {
    let zeros = vec![0; model.shape.len()];
    let got = check(array.read_region_bytes(&zeros, &model.shape), "full read")?;
    prop_assert_eq!(got, model.data.clone(), "full read differs from the model {}", when);
    Ok(())
}

fn run_case(store: Arc<dyn Store>, case: &Case) -> Result<(), TestCaseError> {
    let array = check(Array::create(store.clone(), ARRAY_PATH, metadata(case)), "create")?;
    let mut model = Model::new(&case.shape, &case.fill);
    full_read_matches(&array, &model, "before any write")?;

    for (i, op) in case.ops.iter().enumerate() {
        match op {
            Op::Write { offset, shape, data, fill_mask } => {
                let mut bytes = data.clone();
                let elem = case.fill.len();
                for (k, &use_fill) in fill_mask.iter().enumerate() {
                    if use_fill {
                        bytes[k * elem..(k + 1) * elem].copy_from_slice(&case.fill);
                    }
                }
                check(array.write_region_bytes(offset, shape, &bytes), &format!("op {i}: write"))?;
                model.write(offset, shape, &bytes);
                full_read_matches(&array, &model, &format!("after op {i} (write {offset:?}+{shape:?})"))?;
            }
            Op::Read { offset, shape } => {
                let got = check(array.read_region_bytes(offset, shape), &format!("op {i}: read"))?;
                let want = model.read(offset, shape);
                prop_assert_eq!(got, want, "op {}: read of {:?}+{:?} differs from the model", i, offset, shape);
            }
        }
    }

    // Stored chunks are exactly those holding a non-fill element.
    let want_chunks = model.non_fill_chunks(&case.chunk, &case.fill);
    let stored: Vec<(Vec<u64>, u64)> = check(array.stored_chunks(), "stored_chunks")?;
    let got_chunks: BTreeSet<Vec<u64>> = stored.iter().map(|(c, _)| c.clone()).collect();
    prop_assert_eq!(got_chunks.len(), stored.len(), "stored_chunks lists a chunk twice");
    prop_assert_eq!(&got_chunks, &want_chunks, "stored chunks differ from the model's non-fill chunks");
    // Every stored chunk is a full-size chunk: edge chunks are padded to the chunk shape.
    let full_chunk_bytes = (count(&case.chunk) * case.fill.len()) as u64;
    for (coords, size) in &stored {
        prop_assert_eq!(*size, full_chunk_bytes, "stored size of chunk {:?}", coords);
    }

    // The keys in the store are the spec's keys for those chunks, and nothing else besides the
    // metadata document.
    let keys = check(store.list_prefix(KEY_PREFIX).map_err(zarrdb::Error::from), "list_prefix")?;
    let got_keys: BTreeSet<String> =
        keys.iter().map(|k| k[KEY_PREFIX.len()..].to_string()).filter(|k| k != "zarr.json").collect();
    let want_keys: BTreeSet<String> = want_chunks.iter().map(|c| expected_key(case.key_encoding, c)).collect();
    prop_assert_eq!(got_keys, want_keys, "chunk keys in the store");

    // Stored bytes: each chunk's bytes in the codec's byte order, padding holding the fill value.
    for coords in &want_chunks {
        let key = format!("{KEY_PREFIX}{}", expected_key(case.key_encoding, coords));
        prop_assert_eq!(array.chunk_key(coords), key.clone());
        let raw = check(store.get(&key).map_err(zarrdb::Error::from), "get chunk")?;
        let raw = raw.ok_or_else(|| TestCaseError::fail(format!("chunk {key} missing")))?;
        prop_assert_eq!(raw, expected_chunk_bytes(case, &model, coords), "stored bytes of {}", key);
    }

    // A fresh handle from the stored metadata reads the same array.
    let reopened = check(Array::open(store, ARRAY_PATH), "reopen")?;
    prop_assert_eq!(reopened.metadata().fill_value.as_le_bytes(), &case.fill[..], "fill value after reopen");
    full_read_matches(&reopened, &model, "after reopening")?;
    Ok(())
}

/// The encoded bytes of one chunk according to the model: the chunk's elements in C order (fill
/// value beyond the array's edge), each scalar byte-reversed when the codec is big endian.
fn expected_chunk_bytes(case: &Case, model: &Model, coords: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    for idx in indices(&case.chunk) {
        let coord: Vec<u64> = idx.iter().zip(coords).zip(&case.chunk).map(|((i, c), k)| c * k + i).collect();
        let inside = coord.iter().zip(&case.shape).all(|(c, n)| c < n);
        let mut el = if inside { model.element(&coord).to_vec() } else { case.fill.clone() };
        if case.endian == Some("big") {
            let scalar = match &case.data_type {
                DataType::Complex64 => 4,
                DataType::Complex128 => 8,
                DataType::Bool | DataType::UInt8 | DataType::Raw { .. } => 1,
                other => other.size(),
            };
            for s in el.chunks_exact_mut(scalar) {
                s.reverse();
            }
        }
        out.extend(el);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, max_shrink_iters: 4096, ..ProptestConfig::default() })]

    #[test]
    fn region_io_matches_model_in_memory(case in case()) {
        run_case(Arc::new(MemoryStore::new()), &case)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, max_shrink_iters: 1024, ..ProptestConfig::default() })]

    #[test]
    fn region_io_matches_model_in_directory(case in case()) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let store = DirectoryStore::create(dir.path().join("store")).map_err(|e| TestCaseError::fail(e.to_string()))?;
        run_case(Arc::new(store), &case)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Self-checks of the model (so a model bug is not mistaken for a library bug)
// ---------------------------------------------------------------------------------------------

#[test]
fn model_indices_are_c_order() {
    assert_eq!(indices(&[2, 3]), vec![vec![0, 0], vec![0, 1], vec![0, 2], vec![1, 0], vec![1, 1], vec![1, 2]]);
    assert_eq!(indices(&[]), vec![Vec::<u64>::new()]);
    assert!(indices(&[3, 0, 2]).is_empty());
}

#[test]
fn model_write_and_read_a_block() {
    let mut m = Model::new(&[3, 4], &[0]);
    m.write(&[1, 1], &[2, 2], &[1, 2, 3, 4]);
    assert_eq!(m.data, vec![0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0]);
    assert_eq!(m.read(&[1, 0], &[2, 3]), vec![0, 1, 2, 0, 3, 4]);
    assert_eq!(
        m.non_fill_chunks(&[2, 2], &[0]),
        [vec![0, 0], vec![1, 0], vec![1, 1], vec![0, 1]].into_iter().collect()
    );
}

#[test]
fn expected_keys_follow_the_spec() {
    assert_eq!(expected_key(ChunkKeyEncoding::Default(Separator::Slash), &[1, 0]), "c/1/0");
    assert_eq!(expected_key(ChunkKeyEncoding::Default(Separator::Dot), &[1, 0]), "c.1.0");
    assert_eq!(expected_key(ChunkKeyEncoding::V2(Separator::Dot), &[1, 0]), "1.0");
    assert_eq!(expected_key(ChunkKeyEncoding::V2(Separator::Slash), &[1, 0]), "1/0");
    assert_eq!(expected_key(ChunkKeyEncoding::Default(Separator::Slash), &[]), "c");
    assert_eq!(expected_key(ChunkKeyEncoding::V2(Separator::Dot), &[]), "0");
}
