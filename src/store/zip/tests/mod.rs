//! Tests of the zip reader and writer: round trips, Python's zipfile in both directions, archives
//! built byte by byte to break one rule each, and random damage.

mod hostile;
mod mutation;
mod python;
mod roundtrip;

use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::DeflateEncoder;
use flate2::{Compression, Crc};

use super::{ZipEntry, ZipLimits, ZipReader, ZipWriter};
use crate::error::ZipError;

/// Writes `entries` with our writer into `dir/name` and returns the path.
fn write_archive(dir: &Path, name: &str, entries: &[(&str, &[u8])]) -> PathBuf {
    let path = dir.join(name);
    let mut writer = ZipWriter::create(&path, &path).expect("create");
    for (name, data) in entries {
        writer.add(name, data).expect("add");
    }
    writer.finish().expect("finish");
    path
}

/// Every entry of the archive at `path` as (name, bytes), read and verified.
fn read_all(path: &Path) -> Result<Vec<(String, Vec<u8>)>, ZipError> {
    let reader = ZipReader::open(path, ZipLimits::default())?;
    reader.entries().iter().map(|e| named(&reader, e)).collect()
}

fn named(reader: &ZipReader, entry: &ZipEntry) -> Result<(String, Vec<u8>), ZipError> {
    Ok((entry.name.clone(), reader.read(entry)?))
}

/// Opens `bytes` as an archive (written to a temporary file) with `limits` and reads every entry,
/// returning the first error.
fn open_bytes(bytes: &[u8], limits: ZipLimits) -> Result<Vec<(String, Vec<u8>)>, ZipError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a.zip");
    std::fs::write(&path, bytes).expect("write fixture");
    let reader = ZipReader::open(&path, limits)?;
    reader.entries().iter().map(|e| named(&reader, e)).collect()
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = Crc::new();
    crc.update(data);
    crc.sum()
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut encoder = DeflateEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(data).expect("deflate");
    encoder.finish().expect("deflate")
}

/// One entry of a hand-built archive; every field can be made to lie.
#[derive(Debug, Clone)]
struct Raw {
    /// The name in the central directory.
    name: Vec<u8>,
    /// The name in the local header.
    local_name: Vec<u8>,
    flags: u16,
    method: u16,
    local_method: u16,
    crc32: u32,
    /// Declared uncompressed size.
    size: u32,
    /// Declared compressed size.
    compressed_size: u32,
    /// The bytes after the local header.
    data: Vec<u8>,
    local_extra: Vec<u8>,
    central_extra: Vec<u8>,
    /// Replaces the real local header offset in the central directory.
    offset: Option<u32>,
}

impl Raw {
    fn stored(name: &str, data: &[u8]) -> Raw {
        let len = u32::try_from(data.len()).expect("small fixture");
        Raw {
            name: name.as_bytes().to_vec(),
            local_name: name.as_bytes().to_vec(),
            flags: 0,
            method: 0,
            local_method: 0,
            crc32: crc32(data),
            size: len,
            compressed_size: len,
            data: data.to_vec(),
            local_extra: Vec::new(),
            central_extra: Vec::new(),
            offset: None,
        }
    }

    fn deflated(name: &str, data: &[u8]) -> Raw {
        let compressed = deflate(data);
        Raw {
            method: 8,
            local_method: 8,
            compressed_size: u32::try_from(compressed.len()).expect("small fixture"),
            data: compressed,
            ..Raw::stored(name, data)
        }
    }

    fn with_names(mut self, name: &[u8]) -> Raw {
        self.name = name.to_vec();
        self.local_name = name.to_vec();
        self
    }
}

/// An archive of `entries`, laid out in order, with a central directory and end record that tell
/// the truth about them (the tests then patch what they want to lie about).
fn build(entries: &[Raw]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offsets = Vec::new();
    for e in entries {
        offsets.push(u32::try_from(out.len()).expect("small fixture"));
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        for v in [20u16, e.flags, e.local_method, 0, 0x21] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [e.crc32, e.compressed_size, e.size] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [e.local_name.len(), e.local_extra.len()] {
            out.extend_from_slice(&u16::try_from(v).expect("small fixture").to_le_bytes());
        }
        out.extend_from_slice(&e.local_name);
        out.extend_from_slice(&e.local_extra);
        out.extend_from_slice(&e.data);
    }
    let cd_offset = u32::try_from(out.len()).expect("small fixture");
    for (e, offset) in entries.iter().zip(offsets) {
        out.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        for v in [20u16, 20, e.flags, e.method, 0, 0x21] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [e.crc32, e.compressed_size, e.size] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [e.name.len(), e.central_extra.len(), 0, 0, 0] {
            out.extend_from_slice(&u16::try_from(v).expect("small fixture").to_le_bytes());
        }
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&e.offset.unwrap_or(offset).to_le_bytes());
        out.extend_from_slice(&e.name);
        out.extend_from_slice(&e.central_extra);
    }
    let cd_size = u32::try_from(out.len()).expect("small fixture") - cd_offset;
    let count = u16::try_from(entries.len()).expect("small fixture");
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    for v in [0u16, 0, count, count] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&cd_size.to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// Overwrites `bytes[at..]` with `value`.
fn patch(bytes: &mut [u8], at: usize, value: &[u8]) {
    bytes[at..at + value.len()].copy_from_slice(value);
}

/// Where the end of central directory record of a comment-less archive starts.
fn eocd(bytes: &[u8]) -> usize {
    bytes.len() - 22
}
