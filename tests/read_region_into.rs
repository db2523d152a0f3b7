//! `Array::read_region_bytes_into` writes every byte of the caller's buffer, whatever it held:
//! regions over missing chunks (a fill value that is not zero), edge chunks, one whole chunk,
//! many rows, whole and partly covered shards with missing inner chunks, a rectilinear grid and
//! a 0-d array all read into a buffer of garbage equal to a model kept here; a buffer of the
//! wrong size is refused before anything is written to it.

#[path = "common/shard_codecs.rs"]
mod shard_codecs;

use serde_json::json;
use zarrdb::error::ArrayError;
use zarrdb::metadata::FillValue;
use zarrdb::{Array, ArrayMetadata, DataType, Database, Error};

const FILL: i32 = -7;
const GARBAGE: u8 = 0xab;

fn with_fill(mut meta: ArrayMetadata) -> ArrayMetadata {
    meta.fill_value = FillValue::from_le_bytes(FILL.to_le_bytes().to_vec());
    meta
}

fn sharded(shape: [u64; 2], shard: [u64; 2], inner: [u64; 2]) -> ArrayMetadata {
    let mut meta = with_fill(ArrayMetadata::new(DataType::Int32, shape.to_vec(), shard.to_vec()));
    meta.codecs = shard_codecs::zstd_shards(&inner);
    meta
}

fn rectilinear(shape: [u64; 2]) -> ArrayMetadata {
    let doc = json!({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "int32",
        "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline",
            "chunk_shapes": [[1, [3, 2], 4, [6, 2]], [[4, 2], 9]]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": FILL,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
    });
    ArrayMetadata::from_json(doc.to_string().as_bytes()).expect("valid metadata")
}

/// A 2-D int32 array and the model of its values (row-major, `cols` wide).
struct Case {
    array: Array,
    model: Vec<i32>,
    cols: u64,
}

impl Case {
    fn new(array: Array) -> Case {
        let shape = array.shape().to_vec();
        Case { model: vec![FILL; (shape[0] * shape[1]) as usize], cols: shape[1], array }
    }

    /// Write distinct values over the box, leaving the rest of the array as it was.
    fn write(&mut self, offset: [u64; 2], shape: [u64; 2], seed: i32) {
        let mut bytes = Vec::new();
        for r in 0..shape[0] {
            for c in 0..shape[1] {
                let v = seed + (r * 1000 + c) as i32;
                self.model[((offset[0] + r) * self.cols + offset[1] + c) as usize] = v;
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        self.array.write_region_bytes(&offset, &shape, &bytes).unwrap();
    }

    /// Read the box into a buffer of garbage and compare it with the model.
    fn check(&self, offset: [u64; 2], shape: [u64; 2]) {
        let mut out = vec![GARBAGE; (shape[0] * shape[1] * 4) as usize];
        self.array.read_region_bytes_into(&offset, &shape, &mut out).unwrap();
        let mut want = Vec::new();
        for r in 0..shape[0] {
            for c in 0..shape[1] {
                want.extend_from_slice(
                    &self.model[((offset[0] + r) * self.cols + offset[1] + c) as usize].to_le_bytes(),
                );
            }
        }
        assert!(out == want, "{}: box at {offset:?} of {shape:?} differs from the model", self.array.path());
        assert_eq!(out, self.array.read_region_bytes(&offset, &shape).unwrap());
    }
}

#[test]
fn every_byte_of_the_buffer_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("into.zarrdb")).unwrap();
    let regular = || with_fill(ArrayMetadata::new(DataType::Int32, vec![23, 17], vec![5, 4]));
    let arrays = [
        Array::create(db.store(), "/regular", regular()).unwrap(),
        Array::create(db.store(), "/sharded", sharded([23, 17], [10, 8], [5, 4])).unwrap(),
        Array::create(db.store(), "/rectilinear", rectilinear([23, 17])).unwrap(),
    ];
    for array in arrays {
        let mut case = Case::new(array);
        let shape = case.array.shape().to_vec();
        // Nothing stored yet: every element is the fill value.
        case.check([0, 0], [shape[0], shape[1]]);
        // Two boxes leave whole chunks (and inner chunks of shards) unstored between them.
        case.write([0, 0], [3, 5], 1);
        case.write([7, 9], [5, 1], 50_000);
        for (offset, region) in [
            ([0, 0], [shape[0], shape[1]]), // everything, edge chunks included
            ([0, 0], [5, 4]),               // one whole chunk (of the regular grid)
            ([5, 0], [5, 4]),               // one whole chunk never written
            ([1, 2], [9, 9]),               // chunks covered in part
            ([7, 9], [1, 1]),               // one element
            ([2, 0], [8, shape[1]]),        // several rows of whole width
            ([shape[0] - 1, shape[1] - 3], [1, 3]),
        ] {
            case.check(offset, region);
        }
        case.write([0, 0], [shape[0], shape[1]], 90_000);
        case.check([0, 0], [shape[0], shape[1]]);
        case.check([3, 1], [4, 11]);
    }
}

#[test]
fn a_zero_dimensional_array_reads_into_its_one_element() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("scalar.zarrdb")).unwrap();
    let a = Array::create(db.store(), "/s", with_fill(ArrayMetadata::new(DataType::Int32, vec![], vec![]))).unwrap();
    let mut out = [GARBAGE; 4];
    a.read_region_bytes_into(&[], &[], &mut out).unwrap();
    assert_eq!(out, FILL.to_le_bytes());
    a.write_region_bytes(&[], &[], &42i32.to_le_bytes()).unwrap();
    a.read_region_bytes_into(&[], &[], &mut out).unwrap();
    assert_eq!(out, 42i32.to_le_bytes());
}

#[test]
fn a_buffer_of_the_wrong_size_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("size.zarrdb")).unwrap();
    let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::Int32, vec![10], vec![4])).unwrap();
    for len in [0, 39, 41, 80] {
        let mut out = vec![GARBAGE; len];
        match a.read_region_bytes_into(&[0], &[10], &mut out) {
            Err(Error::Array(ArrayError::BufferLength { array, expected: 40, given })) => {
                assert_eq!((array.as_str(), given), ("/a", len as u64));
            }
            other => panic!("{len} bytes for 40: {other:?}"),
        }
        assert!(out.iter().all(|&b| b == GARBAGE), "the refused buffer was written");
    }
    // The region is checked first: one outside the array names the region, whatever the buffer.
    let mut out = vec![GARBAGE; 40];
    assert!(matches!(
        a.read_region_bytes_into(&[5], &[10], &mut out),
        Err(Error::Array(ArrayError::OutOfBounds { .. }))
    ));
}
