use std::sync::Arc;

use super::{fortran_to_c, NpyHeader};
use crate::error::NpyError;
use crate::metadata::{DataType, StructuredType, TimeUnit};

fn file(header: &str, major: u8, data: &[u8]) -> Vec<u8> {
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[major, 0]);
    if major == 1 {
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

fn read(bytes: &[u8]) -> Result<(NpyHeader, Vec<u8>), NpyError> {
    NpyHeader::read_file(&mut &bytes[..], "x.npy")
}

#[test]
fn written_headers_read_back_and_align_the_data() {
    let structured = StructuredType::new(vec![("a".into(), DataType::Int16), ("é'\\".into(), DataType::Float64)]);
    let types = [
        DataType::Bool,
        DataType::UInt64,
        DataType::Complex128,
        DataType::Float16,
        DataType::Raw { bits: 24 },
        DataType::FixedLengthUtf32 { length_bytes: 12 },
        DataType::NullTerminatedBytes { length_bytes: 5 },
        DataType::DateTime64 { unit: TimeUnit::Second, scale_factor: 10 },
        DataType::TimeDelta64 { unit: TimeUnit::Nanosecond, scale_factor: 1 },
        DataType::DateTime64 { unit: TimeUnit::Generic, scale_factor: 1 },
        DataType::Structured(Arc::new(structured.unwrap())),
    ];
    for data_type in types {
        for shape in [vec![], vec![3], vec![2, 0, 4]] {
            let header = NpyHeader::new(&data_type, &shape, "/a").unwrap();
            let mut bytes = header.to_bytes();
            assert_eq!(bytes.len() % 64, 0, "{data_type}");
            let data: Vec<u8> = (0..header.data_len().unwrap()).map(|i| i as u8).collect();
            bytes.extend_from_slice(&data);
            let (back, read_data) = read(&bytes).unwrap();
            assert_eq!(back, header, "{data_type} {shape:?}");
            assert_eq!(read_data, data);
        }
    }
}

#[test]
fn long_and_non_latin1_headers_take_versions_2_and_3() {
    let many: Vec<(String, DataType)> = (0..4000).map(|i| (format!("field{i}"), DataType::UInt8)).collect();
    let header = NpyHeader::new(&DataType::Structured(Arc::new(StructuredType::new(many).unwrap())), &[1], "/a");
    let bytes = header.unwrap().to_bytes();
    assert_eq!(bytes[6], 2);
    let greek = StructuredType::new(vec![("λ".into(), DataType::UInt8)]).unwrap();
    let bytes = NpyHeader::new(&DataType::Structured(Arc::new(greek)), &[1], "/a").unwrap().to_bytes();
    assert_eq!(bytes[6], 3);
    assert_eq!(read(&[bytes, vec![7]].concat()).unwrap().1, [7]);
}

#[test]
fn big_endian_and_fortran_data_come_out_little_endian_c_order() {
    let header = "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3), }";
    // Fortran order: column by column, so element (r, c) = 10 * r + c lies at c * 2 + r.
    let values: Vec<i32> = vec![0, 10, 1, 11, 2, 12];
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    let (h, out) = read(&file(header, 1, &data)).unwrap();
    assert_eq!(h.shape(), [2, 3]);
    let back: Vec<i32> = out.chunks_exact(4).map(|b| i32::from_le_bytes(b.try_into().unwrap())).collect();
    assert_eq!(back, [0, 1, 2, 10, 11, 12]);
    // A complex number swaps each of its two halves.
    let header = "{'descr': '>c8', 'fortran_order': False, 'shape': (1,), }";
    let data: Vec<u8> = [1.5f32, -2.0].iter().flat_map(|v| v.to_be_bytes()).collect();
    let (_, out) = read(&file(header, 2, &data)).unwrap();
    assert_eq!(out, [1.5f32, -2.0].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
    assert_eq!(fortran_to_c(&[1, 2, 3, 4, 5, 6], &[3, 2, 1], 1), [1, 4, 2, 5, 3, 6]);
}

#[test]
fn bad_files_are_typed_errors() {
    let ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"PK\x03\x04".to_vec(), "ends before"),
        (b"\x93NUMPX\x01\x00\x00\x00".to_vec(), "magic"),
        (file(ok, 4, &[0; 8]), "version"),
        (file(ok, 1, &[0; 7]), "promises 8 bytes"),
        (file(ok, 1, &[0; 9]), "holds 9"),
        (file("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 1, &[]), "object"),
        (file("{'descr': '<f4', 'shape': (2,), }", 1, &[]), "keys"),
        (file("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", 1, &[]), "bool"),
        (file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 'x'), }", 1, &[]), "tuple of integers"),
        (file("{'descr': '<q9', 'fortran_order': False, 'shape': (2,), }", 1, &[]), "<q9"),
        (file("{'descr': [('a', '>i4')], 'fortran_order': False, 'shape': (2,), }", 1, &[]), "big-endian"),
        (file("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 1, &[]), "64 bits"),
    ];
    for (bytes, expected) in cases {
        let err = read(&bytes).unwrap_err().to_string();
        assert!(err.contains(expected), "{err:?} lacks {expected:?}");
        assert!(err.contains("x.npy"), "{err:?} does not name the file");
    }
    // A header that claims more than the bound is refused before anything is allocated.
    let mut huge = b"\x93NUMPY\x02\x00".to_vec();
    huge.extend_from_slice(&u32::MAX.to_le_bytes());
    assert!(read(&huge).unwrap_err().to_string().contains("more than the"));
    // A shape promising a terabyte reads what is there and says so.
    let big = file("{'descr': '<f8', 'fortran_order': False, 'shape': (137438953472,), }", 1, &[0; 16]);
    assert!(read(&big).unwrap_err().to_string().contains("holds 16"));
    let vlen = NpyHeader::new(&DataType::String, &[1], "/text").unwrap_err().to_string();
    assert!(vlen.contains("/text") && vlen.contains("pickled"), "{vlen}");
}
