//! Region I/O edge cases, one focused test each: 0-d arrays, edge chunks, erasing chunks that
//! return to the fill value (NaN fill values included), refused regions with their typed errors,
//! and the byte order of stored chunks.

use std::sync::Arc;

use num_complex::Complex;
use serde_json::Map;
use zarrdb::error::ArrayError;
use zarrdb::metadata::{ChunkKeyEncoding, NamedConfig, Separator};
use zarrdb::{Array, ArrayMetadata, DataType, Error, FillValue, MemoryStore, Store};

fn memory() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new())
}

fn bytes_codec(endian: &str) -> Vec<NamedConfig> {
    let mut config = Map::new();
    config.insert("endian".into(), endian.into());
    vec![NamedConfig::with_configuration("bytes", config)]
}

/// Every key of the store except metadata documents.
fn chunk_keys(store: &Arc<dyn Store>) -> Vec<String> {
    store.list_prefix("").unwrap().into_iter().filter(|k| !k.ends_with("zarr.json")).collect()
}

// ---------------------------------------------------------------------------------------------
// 0-d arrays
// ---------------------------------------------------------------------------------------------

#[test]
fn zero_dimensional_array_default_key_encoding() {
    let store = memory();
    let mut meta = ArrayMetadata::new(DataType::Int32, vec![], vec![]);
    meta.fill_value = FillValue::from_le_bytes(5i32.to_le_bytes().to_vec());
    let a = Array::create(store.clone(), "/scalar", meta).unwrap();

    assert_eq!(a.chunk_key(&[]), "scalar/c");
    assert_eq!(a.read_region::<i32>(&[], &[]).unwrap(), vec![5], "unwritten 0-d array reads the fill value");
    assert!(a.stored_chunks().unwrap().is_empty());

    a.write_region::<i32>(&[], &[], &[-42]).unwrap();
    assert_eq!(a.read_region::<i32>(&[], &[]).unwrap(), vec![-42]);
    assert_eq!(a.read_region_bytes(&[], &[]).unwrap(), (-42i32).to_le_bytes().to_vec());
    assert_eq!(store.get("scalar/c").unwrap(), Some((-42i32).to_le_bytes().to_vec()));
    assert_eq!(a.stored_chunks().unwrap(), vec![(vec![], 4)]);
    assert_eq!(chunk_keys(&store), vec!["scalar/c".to_string()]);

    let again = Array::open(store.clone(), "/scalar").unwrap();
    assert_eq!(again.read_all::<i32>().unwrap(), vec![-42]);

    // Writing the fill value back erases the only chunk.
    a.write_region::<i32>(&[], &[], &[5]).unwrap();
    assert_eq!(store.get("scalar/c").unwrap(), None);
    assert_eq!(a.read_region::<i32>(&[], &[]).unwrap(), vec![5]);
}

#[test]
fn zero_dimensional_array_v2_key_encoding() {
    for sep in [Separator::Dot, Separator::Slash] {
        let store = memory();
        let mut meta = ArrayMetadata::new(DataType::Float64, vec![], vec![]);
        meta.chunk_key_encoding = ChunkKeyEncoding::V2(sep);
        let a = Array::create(store.clone(), "/s", meta).unwrap();
        assert_eq!(a.chunk_key(&[]), "s/0");
        a.write_region::<f64>(&[], &[], &[1.5]).unwrap();
        assert_eq!(store.get("s/0").unwrap(), Some(1.5f64.to_le_bytes().to_vec()));
        assert_eq!(chunk_keys(&store), vec!["s/0".to_string()]);
        assert_eq!(a.stored_chunks().unwrap(), vec![(vec![], 8)]);
        assert_eq!(Array::open(store, "/s").unwrap().read_all::<f64>().unwrap(), vec![1.5]);
    }
}

#[test]
fn zero_dimensional_array_refuses_rank_one_regions() {
    let a = Array::create(memory(), "/s", ArrayMetadata::new(DataType::UInt8, vec![], vec![])).unwrap();
    match a.read_region_bytes(&[0], &[1]) {
        Err(Error::Array(ArrayError::RankMismatch { expected: 0, given: 1, .. })) => {}
        other => panic!("expected RankMismatch, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Edge chunks
// ---------------------------------------------------------------------------------------------

#[test]
fn write_exactly_covering_an_edge_chunk() {
    // Shape 5x7, chunks 4x4: chunk (1, 1) holds only the in-bounds box [4..5, 4..7] (1x3).
    let store = memory();
    let mut meta = ArrayMetadata::new(DataType::Int16, vec![5, 7], vec![4, 4]);
    meta.fill_value = FillValue::from_le_bytes((-1i16).to_le_bytes().to_vec());
    let a = Array::create(store.clone(), "/e", meta).unwrap();

    // Something already stored there must be replaced, not merged.
    a.write_region::<i16>(&[3, 3], &[2, 4], &[10, 11, 12, 13, 20, 21, 22, 23]).unwrap();
    a.write_region::<i16>(&[4, 4], &[1, 3], &[7, 8, 9]).unwrap();

    let all = a.read_all::<i16>().unwrap();
    let mut want = vec![-1i16; 35];
    want[3 * 7 + 3..3 * 7 + 7].copy_from_slice(&[10, 11, 12, 13]);
    want[4 * 7 + 3..4 * 7 + 7].copy_from_slice(&[20, 7, 8, 9]);
    assert_eq!(all, want);

    // The stored edge chunk is full size (4x4), its padding holding the fill value.
    let raw = store.get(&a.chunk_key(&[1, 1])).unwrap().expect("edge chunk stored");
    let mut chunk = [-1i16; 16];
    chunk[0..3].copy_from_slice(&[7, 8, 9]);
    let want_raw: Vec<u8> = chunk.iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(raw, want_raw);

    // Covering the edge chunk's in-bounds part with the fill value erases it.
    a.write_region::<i16>(&[4, 4], &[1, 3], &[-1, -1, -1]).unwrap();
    assert_eq!(store.get(&a.chunk_key(&[1, 1])).unwrap(), None);
    let mut coords: Vec<Vec<u64>> = a.stored_chunks().unwrap().into_iter().map(|(c, _)| c).collect();
    coords.sort();
    assert_eq!(coords, vec![vec![0, 0], vec![0, 1], vec![1, 0]]);
}

#[test]
fn chunk_larger_than_the_array() {
    let store = memory();
    let a = Array::create(store.clone(), "/big", ArrayMetadata::new(DataType::UInt8, vec![2, 3], vec![5, 5])).unwrap();
    a.write_region_bytes(&[0, 0], &[2, 3], &[1, 2, 3, 4, 5, 6]).unwrap();
    assert_eq!(a.read_region_bytes(&[1, 1], &[1, 2]).unwrap(), vec![5, 6]);
    let raw = store.get("big/c/0/0").unwrap().unwrap();
    assert_eq!(raw.len(), 25);
    assert_eq!(&raw[0..3], &[1, 2, 3]);
    assert_eq!(&raw[5..8], &[4, 5, 6]);
    assert!(raw[3..5].iter().chain(&raw[8..]).all(|&b| b == 0));
}

#[test]
fn empty_regions_are_allowed_anywhere_in_bounds() {
    let store = memory();
    let a =
        Array::create(store.clone(), "/z", ArrayMetadata::new(DataType::Int32, vec![4, 0, 3], vec![2, 2, 2])).unwrap();
    assert_eq!(a.read_region_bytes(&[0, 0, 0], &[4, 0, 3]).unwrap(), Vec::<u8>::new());
    a.write_region_bytes(&[0, 0, 0], &[4, 0, 3], &[]).unwrap();
    let b = Array::create(store.clone(), "/y", ArrayMetadata::new(DataType::Int32, vec![4], vec![3])).unwrap();
    // An empty region may start at the very end.
    assert_eq!(b.read_region::<i32>(&[4], &[0]).unwrap(), Vec::<i32>::new());
    b.write_region::<i32>(&[4], &[0], &[]).unwrap();
    assert!(chunk_keys(&store).is_empty());
}

// ---------------------------------------------------------------------------------------------
// Fill values erase chunks
// ---------------------------------------------------------------------------------------------

#[test]
fn writing_the_fill_value_over_a_stored_chunk_erases_its_key() {
    let store = memory();
    let mut meta = ArrayMetadata::new(DataType::UInt16, vec![6], vec![3]);
    meta.fill_value = FillValue::from_le_bytes(9u16.to_le_bytes().to_vec());
    let a = Array::create(store.clone(), "/f", meta).unwrap();

    a.write_region::<u16>(&[0], &[6], &[1, 9, 2, 3, 4, 5]).unwrap();
    assert!(store.get("f/c/0").unwrap().is_some());
    assert!(store.get("f/c/1").unwrap().is_some());

    // Partly back to fill: still stored.
    a.write_region::<u16>(&[0], &[1], &[9]).unwrap();
    assert!(store.get("f/c/0").unwrap().is_some());
    // The last non-fill element of chunk 0 goes: erased.
    a.write_region::<u16>(&[2], &[1], &[9]).unwrap();
    assert_eq!(store.get("f/c/0").unwrap(), None);
    assert!(store.get("f/c/1").unwrap().is_some());
    // A write spanning both chunks with fill only erases chunk 1 too.
    a.write_region::<u16>(&[1], &[5], &[9; 5]).unwrap();
    assert_eq!(store.get("f/c/1").unwrap(), None);
    assert!(chunk_keys(&store).is_empty());
    assert_eq!(a.read_all::<u16>().unwrap(), vec![9; 6]);

    // Writing fill into a chunk that was never stored stores nothing.
    a.write_region::<u16>(&[0], &[6], &[9; 6]).unwrap();
    assert!(chunk_keys(&store).is_empty());
}

#[test]
fn canonical_nan_fill_erases_but_other_nans_are_stored() {
    const CANONICAL: u32 = 0x7fc0_0000;
    const PAYLOAD: u32 = 0x7fc0_0001;
    const NEGATIVE: u32 = 0xffc0_0000;
    let store = memory();
    let mut meta = ArrayMetadata::new(DataType::Float32, vec![4, 4], vec![2, 2]);
    meta.fill_value = FillValue::from_le_bytes(CANONICAL.to_le_bytes().to_vec());
    let a = Array::create(store.clone(), "/nan", meta).unwrap();
    let reopened_fill = Array::open(store.clone(), "/nan").unwrap().fill_value().as_le_bytes().to_vec();
    assert_eq!(reopened_fill, CANONICAL.to_le_bytes());

    // Ordinary values everywhere, then canonical NaN everywhere: nothing stored.
    a.write_region::<f32>(&[0, 0], &[4, 4], &[1.0; 16]).unwrap();
    assert_eq!(a.stored_chunks().unwrap().len(), 4);
    a.write_region::<f32>(&[0, 0], &[4, 4], &[f32::from_bits(CANONICAL); 16]).unwrap();
    assert!(chunk_keys(&store).is_empty(), "canonical NaN equals the fill value bytewise");

    // A NaN with another payload (or sign) is a different value: stored, and read back bit-exact.
    a.write_region::<f32>(&[1, 1], &[1, 1], &[f32::from_bits(PAYLOAD)]).unwrap();
    a.write_region::<f32>(&[3, 3], &[1, 1], &[f32::from_bits(NEGATIVE)]).unwrap();
    let mut coords: Vec<Vec<u64>> = a.stored_chunks().unwrap().into_iter().map(|(c, _)| c).collect();
    coords.sort();
    assert_eq!(coords, vec![vec![0, 0], vec![1, 1]]);
    let bits: Vec<u32> = a.read_all::<f32>().unwrap().iter().map(|v| v.to_bits()).collect();
    let mut want = vec![CANONICAL; 16];
    want[5] = PAYLOAD;
    want[15] = NEGATIVE;
    assert_eq!(bits, want);
    let raw = store.get("nan/c/0/0").unwrap().unwrap();
    assert_eq!(&raw[12..16], &PAYLOAD.to_le_bytes());

    // After reopening (the fill value goes through JSON) the payload NaN is still stored and the
    // canonical NaN still erases.
    let b = Array::open(store.clone(), "/nan").unwrap();
    let bits: Vec<u32> = b.read_all::<f32>().unwrap().iter().map(|v| v.to_bits()).collect();
    assert_eq!(bits, want);
    b.write_region::<f32>(&[0, 0], &[4, 4], &[f32::from_bits(CANONICAL); 16]).unwrap();
    assert!(chunk_keys(&store).is_empty());
}

#[test]
fn nan_payload_fill_value_survives_reopen() {
    // A non-canonical NaN fill value is written as hex; every chunk equal to it is erased.
    const PAYLOAD: u64 = 0x7ff0_0000_0000_0001; // a signalling NaN
    let store = memory();
    let mut meta = ArrayMetadata::new(DataType::Float64, vec![3], vec![2]);
    meta.fill_value = FillValue::from_le_bytes(PAYLOAD.to_le_bytes().to_vec());
    let a = Array::create(store.clone(), "/snan", meta).unwrap();
    a.write_region::<f64>(&[0], &[3], &[f64::NAN; 3]).unwrap();
    assert_eq!(a.stored_chunks().unwrap().len(), 2, "the default NaN differs from the fill's payload");
    let b = Array::open(store.clone(), "/snan").unwrap();
    assert_eq!(b.fill_value().as_le_bytes(), &PAYLOAD.to_le_bytes());
    b.write_region::<f64>(&[0], &[3], &[f64::from_bits(PAYLOAD); 3]).unwrap();
    assert!(chunk_keys(&store).is_empty());
}

#[test]
fn negative_zero_is_not_the_zero_fill_value() {
    let store = memory();
    let a = Array::create(store.clone(), "/z", ArrayMetadata::new(DataType::Float32, vec![2], vec![2])).unwrap();
    a.write_region::<f32>(&[0], &[2], &[-0.0, 0.0]).unwrap();
    assert!(store.get("z/c/0").unwrap().is_some());
    assert_eq!(a.read_all::<f32>().unwrap()[0].to_bits(), (-0.0f32).to_bits());
}

// ---------------------------------------------------------------------------------------------
// Refused regions: typed errors, no panic, nothing written
// ---------------------------------------------------------------------------------------------

fn error_array(store: Arc<dyn Store>) -> Array {
    Array::create(store, "/err", ArrayMetadata::new(DataType::Float32, vec![4, 6], vec![3, 3])).unwrap()
}

fn assert_out_of_bounds(r: Result<impl std::fmt::Debug, Error>, what: &str) {
    match r {
        Err(Error::Array(ArrayError::OutOfBounds { array, shape, .. })) => {
            assert_eq!(array, "/err", "{what}");
            assert_eq!(shape, vec![4, 6], "{what}");
        }
        other => panic!("{what}: expected OutOfBounds, got {other:?}"),
    }
}

#[test]
fn out_of_bounds_regions_are_refused() {
    let store = memory();
    let a = error_array(store.clone());
    let cases: [(&[u64], &[u64]); 6] = [
        (&[0, 0], &[5, 1]), // past the end
        (&[3, 0], &[2, 6]), // offset in bounds, end past it
        (&[0, 6], &[1, 1]), // offset at the end, non-empty
        (&[5, 0], &[0, 0]), // empty region starting past the end
        (&[4, 7], &[0, 0]), // idem, other dimension
        (&[0, 0], &[4, 7]), // one past on the last dimension
    ];
    for (offset, shape) in cases {
        let n = (shape.iter().product::<u64>() * 4) as usize;
        assert_out_of_bounds(a.read_region_bytes(offset, shape), &format!("read {offset:?}+{shape:?}"));
        assert_out_of_bounds(a.write_region_bytes(offset, shape, &vec![1; n]), &format!("write {offset:?}+{shape:?}"));
        assert_out_of_bounds(a.read_region::<f32>(offset, shape), &format!("typed read {offset:?}+{shape:?}"));
    }
    assert!(chunk_keys(&store).is_empty(), "refused writes store nothing");
}

#[test]
fn offset_plus_shape_overflow_is_out_of_bounds() {
    let store = memory();
    let a = error_array(store.clone());
    let cases: [(&[u64], &[u64]); 4] = [
        (&[u64::MAX, 0], &[1, 1]),
        (&[1, 0], &[u64::MAX, 1]),
        (&[u64::MAX, u64::MAX], &[u64::MAX, u64::MAX]),
        (&[0, u64::MAX], &[0, 2]),
    ];
    for (offset, shape) in cases {
        assert_out_of_bounds(a.read_region_bytes(offset, shape), &format!("read {offset:?}+{shape:?}"));
        assert_out_of_bounds(a.write_region_bytes(offset, shape, &[0; 4]), &format!("write {offset:?}+{shape:?}"));
    }
    assert!(chunk_keys(&store).is_empty());
}

#[test]
fn rank_mismatch_is_refused() {
    let store = memory();
    let a = error_array(store.clone());
    let cases: [(&[u64], &[u64], usize); 4] =
        [(&[0], &[1], 1), (&[0, 0, 0], &[1, 1, 1], 3), (&[0, 0], &[1], 1), (&[0], &[1, 1], 1)];
    for (offset, shape, given) in cases {
        for r in [a.read_region_bytes(offset, shape).map(|_| ()), a.write_region_bytes(offset, shape, &[0; 4])] {
            match r {
                Err(Error::Array(ArrayError::RankMismatch { expected: 2, given: g, .. })) => {
                    assert_eq!(g, given, "{offset:?}+{shape:?}")
                }
                other => panic!("{offset:?}+{shape:?}: expected RankMismatch, got {other:?}"),
            }
        }
    }
    assert!(chunk_keys(&store).is_empty());
}

#[test]
fn wrong_buffer_length_is_refused() {
    let store = memory();
    let a = error_array(store.clone());
    for len in [0usize, 23, 25, 4 * 6 * 4 + 4] {
        match a.write_region_bytes(&[0, 0], &[2, 3], &vec![1; len]) {
            Err(Error::Array(ArrayError::BufferLength { expected: 24, given, .. })) => assert_eq!(given, len as u64),
            other => panic!("len {len}: expected BufferLength, got {other:?}"),
        }
    }
    // Typed: the element count is wrong.
    match a.write_region::<f32>(&[0, 0], &[2, 3], &[1.0; 5]) {
        Err(Error::Array(ArrayError::BufferLength { expected: 24, given: 20, .. })) => {}
        other => panic!("expected BufferLength, got {other:?}"),
    }
    // An empty region needs an empty buffer.
    match a.write_region_bytes(&[0, 0], &[0, 3], &[0; 4]) {
        Err(Error::Array(ArrayError::BufferLength { expected: 0, given: 4, .. })) => {}
        other => panic!("expected BufferLength, got {other:?}"),
    }
    assert!(chunk_keys(&store).is_empty());
}

#[test]
fn wrong_element_type_is_refused() {
    let store = memory();
    let a = error_array(store.clone());
    match a.read_region::<f64>(&[0, 0], &[1, 1]) {
        Err(Error::Array(ArrayError::ElementType { data_type, requested, .. })) => {
            assert_eq!(data_type, "float32");
            assert!(requested.contains("f64"), "{requested}");
        }
        other => panic!("expected ElementType, got {other:?}"),
    }
    match a.write_region::<f64>(&[0, 0], &[1, 1], &[1.0]) {
        Err(Error::Array(ArrayError::ElementType { .. })) => {}
        other => panic!("expected ElementType, got {other:?}"),
    }
    // Same size, different type: still refused.
    match a.read_region::<i32>(&[0, 0], &[1, 1]) {
        Err(Error::Array(ArrayError::ElementType { .. })) => {}
        other => panic!("expected ElementType, got {other:?}"),
    }
    match a.read_all::<Complex<f32>>() {
        Err(Error::Array(ArrayError::ElementType { .. })) => {}
        other => panic!("expected ElementType, got {other:?}"),
    }
    assert!(chunk_keys(&store).is_empty());
}

#[test]
fn huge_in_bounds_region_is_too_large_not_a_panic() {
    let store = memory();
    let a = Array::create(
        store.clone(),
        "/huge",
        ArrayMetadata::new(DataType::UInt8, vec![u64::MAX, u64::MAX], vec![1, 1]),
    )
    .unwrap();
    match a.read_region_bytes(&[0, 0], &[u64::MAX, u64::MAX]) {
        Err(Error::Array(ArrayError::TooLarge { elements, .. })) => {
            assert_eq!(elements, u64::MAX as u128 * u64::MAX as u128)
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    match a.write_region_bytes(&[0, 0], &[u64::MAX, 2], &[]) {
        Err(Error::Array(ArrayError::TooLarge { .. })) => {}
        other => panic!("expected TooLarge, got {other:?}"),
    }
    // A small region at the far corner works.
    a.write_region_bytes(&[u64::MAX - 1, u64::MAX - 2], &[1, 2], &[3, 4]).unwrap();
    assert_eq!(a.read_region_bytes(&[u64::MAX - 1, u64::MAX - 3], &[1, 3]).unwrap(), vec![0, 3, 4]);
    let key = format!("huge/c/{}/{}", u64::MAX - 1, u64::MAX - 2);
    assert_eq!(store.get(&key).unwrap(), Some(vec![3]));
}

// ---------------------------------------------------------------------------------------------
// Byte order of stored chunks
// ---------------------------------------------------------------------------------------------

#[test]
fn big_endian_array_stores_byte_swapped_chunks() {
    let store = memory();
    let mut meta = ArrayMetadata::new(DataType::Int32, vec![3], vec![2]);
    meta.codecs = bytes_codec("big");
    meta.fill_value = FillValue::from_le_bytes(0x0a0b_0c0du32.to_le_bytes().to_vec());
    let a = Array::create(store.clone(), "/be", meta).unwrap();
    a.write_region::<i32>(&[0], &[3], &[0x0102_0304, -2, 0x1122_3344]).unwrap();

    assert_eq!(store.get("be/c/0").unwrap(), Some(vec![1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe]));
    // Edge chunk: the element then the padding (fill value), both big endian.
    assert_eq!(store.get("be/c/1").unwrap(), Some(vec![0x11, 0x22, 0x33, 0x44, 0x0a, 0x0b, 0x0c, 0x0d]));
    // The API still speaks little endian.
    assert_eq!(a.read_region_bytes(&[0], &[1]).unwrap(), vec![4, 3, 2, 1]);
    assert_eq!(Array::open(store, "/be").unwrap().read_all::<i32>().unwrap(), vec![0x0102_0304, -2, 0x1122_3344]);
}

#[test]
fn big_endian_swaps_each_part_of_a_complex_and_half_floats() {
    let store = memory();
    let mut meta = ArrayMetadata::new(DataType::Complex64, vec![1], vec![1]);
    meta.codecs = bytes_codec("big");
    let a = Array::create(store.clone(), "/c", meta).unwrap();
    let v = Complex::new(f32::from_bits(0x0102_0304), f32::from_bits(0x0506_0708));
    a.write_region(&[0], &[1], &[v]).unwrap();
    assert_eq!(store.get("c/c/0").unwrap(), Some(vec![1, 2, 3, 4, 5, 6, 7, 8]));
    assert_eq!(a.read_all::<Complex<f32>>().unwrap()[0].re.to_bits(), 0x0102_0304);

    let mut meta = ArrayMetadata::new(DataType::Float16, vec![2], vec![2]);
    meta.codecs = bytes_codec("big");
    let h = Array::create(store.clone(), "/h", meta).unwrap();
    h.write_region_bytes(&[0], &[2], &[0x00, 0x3c, 0x02, 0x01]).unwrap();
    assert_eq!(store.get("h/c/0").unwrap(), Some(vec![0x3c, 0x00, 0x01, 0x02]));

    // One-byte-layout types are never swapped, whatever the endian member says.
    let mut meta = ArrayMetadata::new(DataType::Raw { bits: 24 }, vec![1], vec![1]);
    meta.codecs = bytes_codec("big");
    let r = Array::create(store.clone(), "/r", meta).unwrap();
    r.write_region_bytes(&[0], &[1], &[1, 2, 3]).unwrap();
    assert_eq!(store.get("r/c/0").unwrap(), Some(vec![1, 2, 3]));
}

#[test]
fn little_endian_array_stores_bytes_as_given() {
    let store = memory();
    let a = Array::create(store.clone(), "/le", ArrayMetadata::new(DataType::Int32, vec![1], vec![1])).unwrap();
    a.write_region::<i32>(&[0], &[1], &[0x0102_0304]).unwrap();
    assert_eq!(store.get("le/c/0").unwrap(), Some(vec![4, 3, 2, 1]));
}
