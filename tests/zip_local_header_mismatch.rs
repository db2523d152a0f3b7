//! A zip entry whose local file header disagrees with its central directory record is refused
//! (issue 40): a damaged central directory can point an entry at a header that describes other
//! bytes, and the CRC-32 the record carries then vouches for what is read. The reader compares
//! the local header's name, method, CRC-32 and sizes with the record before it reads the data;
//! before, only the name and method were compared and `cat` printed the bytes.

#[path = "common/zip_craft.rs"]
mod zip_craft;

use std::process::Command;

use zip_craft::{archive, Crafted};

const DOC: &[u8] = br#"{"zarr_format": 3, "node_type": "array", "shape": [8], "data_type": "uint8",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
    "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]}"#;

/// An archive of the array with chunks `c/0` and `c/1`, and where `c/0`'s local header starts.
fn zip() -> (Vec<u8>, usize) {
    let entries =
        [Crafted::new(b"zarr.json", DOC), Crafted::new(b"c/0", &[1, 2, 3, 4]), Crafted::new(b"c/1", &[5, 6, 7, 8])];
    (archive(&entries), 30 + b"zarr.json".len() + DOC.len())
}

fn cat(bytes: &[u8]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.zip");
    std::fs::write(&path, bytes).unwrap();
    Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(["cat", "--json", path.to_str().unwrap(), "/"]).output().unwrap()
}

fn refused(bytes: &[u8], what: &str) {
    let out = cat(bytes);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{what}: {out:?}");
    assert!(out.stdout.is_empty(), "{what}: printed {}", String::from_utf8_lossy(&out.stdout));
    assert!(stderr.contains("\"c/0\"") && stderr.contains("local header declares"), "{what}: {stderr}");
}

#[test]
fn intact_archive_reads() {
    let (bytes, _) = zip();
    let out = cat(&bytes);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[1,2,3,4,5,6,7,8]\n");
}

#[test]
fn a_local_header_with_another_crc_is_refused() {
    let (mut bytes, local) = zip();
    // c/1's CRC-32, copied from its own local header.
    let other = local + 30 + 3 + 4;
    let crc: [u8; 4] = bytes[other + 14..other + 18].try_into().unwrap();
    bytes[local + 14..local + 18].copy_from_slice(&crc);
    refused(&bytes, "CRC");
}

#[test]
fn a_local_header_with_other_sizes_is_refused() {
    let (mut bytes, local) = zip();
    for field in [18, 22] {
        bytes[local + field..local + field + 4].copy_from_slice(&3u32.to_le_bytes());
    }
    refused(&bytes, "sizes");
}
