//! What the writer writes, the reader reads back: names, bytes, sizes, CRCs, Zip64 included.

use super::{build, read_all, write_archive, Raw};
use crate::error::ZipError;
use crate::store::zip::{Method, ZipLimits, ZipReader, ZipWriter};

fn owned(entries: &[(&str, &[u8])]) -> Vec<(String, Vec<u8>)> {
    entries.iter().map(|(n, d)| ((*n).to_owned(), d.to_vec())).collect()
}

/// A mix of sizes, an empty entry and non-ASCII names.
fn mixed() -> Vec<(String, Vec<u8>)> {
    let mut entries = vec![
        ("zarr.json".to_owned(), b"{\"zarr_format\": 3, \"node_type\": \"group\"}".to_vec()),
        ("empty".to_owned(), Vec::new()),
        ("données/températures/c/0".to_owned(), vec![0xC3; 300]),
        ("日本/zarr.json".to_owned(), b"{}".to_vec()),
    ];
    for i in 0..50u32 {
        entries.push((format!("a/c/{i}/0"), (0..i * 37).map(|b| (b % 251) as u8).collect()));
    }
    entries
}

fn write_owned(writer: &mut ZipWriter, entries: &[(String, Vec<u8>)]) {
    for (name, data) in entries {
        writer.add(name, data).expect("add");
    }
}

#[test]
fn empty_and_single_entry_archives_round_trip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = write_archive(dir.path(), "empty.zip", &[]);
    assert_eq!(std::fs::metadata(&empty).expect("stat").len(), 22);
    assert!(read_all(&empty).expect("read").is_empty());
    let one: &[(&str, &[u8])] = &[("zarr.json", b"{}")];
    assert_eq!(read_all(&write_archive(dir.path(), "one.zip", one)).expect("read"), owned(one));
    let empty_entry: &[(&str, &[u8])] = &[("e", b"")];
    assert_eq!(read_all(&write_archive(dir.path(), "e.zip", empty_entry)).expect("read"), owned(empty_entry));
}

#[test]
fn many_entries_round_trip_with_their_metadata() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mixed.zip");
    let entries = mixed();
    let mut writer = ZipWriter::create(&path, &path).expect("create");
    write_owned(&mut writer, &entries);
    let written = writer.finish().expect("finish");
    assert_eq!(written, std::fs::metadata(&path).expect("stat").len());
    let reader = ZipReader::open(&path, ZipLimits::default()).expect("open");
    assert!(reader.duplicates().is_empty());
    for (entry, (name, data)) in reader.entries().iter().zip(&entries) {
        assert_eq!(&entry.name, name);
        assert_eq!((entry.size, entry.compressed_size), (data.len() as u64, data.len() as u64));
        assert_eq!(entry.crc32, super::crc32(data));
        assert_eq!(entry.method, Method::Stored);
        assert_eq!(&reader.read(entry).expect("read"), data);
    }
    assert_eq!(reader.entries().len(), entries.len());
}

#[test]
fn forced_zip64_fields_round_trip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("zip64.zip");
    let entries = mixed();
    let mut writer = ZipWriter::create_forcing_zip64(&path).expect("create");
    write_owned(&mut writer, &entries);
    writer.finish().expect("finish");
    let bytes = std::fs::read(&path).expect("read file");
    // The end records must be the Zip64 ones, with the classic fields saturated.
    let eocd = bytes.len() - 22;
    assert_eq!(bytes[eocd - 20..eocd - 16], 0x0706_4b50u32.to_le_bytes());
    assert_eq!(bytes[eocd + 10..eocd + 20], [0xFF; 10]);
    assert_eq!(read_all(&path).expect("read"), entries);
}

#[test]
fn more_than_65535_entries_use_the_zip64_end_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("many.zip");
    let mut writer = ZipWriter::create(&path, &path).expect("create");
    for i in 0..70_000u32 {
        writer.add(&format!("c/{i}"), &i.to_le_bytes()).expect("add");
    }
    writer.finish().expect("finish");
    let bytes = std::fs::read(&path).expect("read file");
    let eocd = bytes.len() - 22;
    assert_eq!(bytes[eocd - 20..eocd - 16], 0x0706_4b50u32.to_le_bytes());
    assert_eq!(bytes[eocd + 10..eocd + 12], [0xFF, 0xFF]);
    let reader = ZipReader::open(&path, ZipLimits::default()).expect("open");
    assert_eq!(reader.entries().len(), 70_000);
    for i in [0u32, 65_534, 65_535, 69_999] {
        let entry = &reader.entries()[i as usize];
        assert_eq!(entry.name, format!("c/{i}"));
        assert_eq!(reader.read(entry).expect("read"), i.to_le_bytes());
    }
}

#[test]
fn the_writer_refuses_duplicates_and_overlong_names_and_existing_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("w.zip");
    let mut writer = ZipWriter::create(&path, &path).expect("create");
    writer.add("a", b"1").expect("add");
    writer.add("b", b"2").expect("add");
    assert!(matches!(writer.add("a", b"3"), Err(ZipError::DuplicateName { entry, .. }) if entry == "a"));
    let long = "x".repeat(65_536);
    assert!(matches!(writer.add(&long, b""), Err(ZipError::NameTooLong { len: 65_536, .. })));
    writer.add(&long[..65_535], b"4").expect("longest name");
    writer.finish().expect("finish");
    let names: Vec<String> = read_all(&path).expect("read").into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["a".to_owned(), "b".to_owned(), long[..65_535].to_owned()]);
    assert!(matches!(ZipWriter::create(&path, &path), Err(ZipError::Io { .. })));
}

#[test]
fn output_is_reproducible() {
    let dir = tempfile::tempdir().expect("tempdir");
    let entries: &[(&str, &[u8])] = &[("zarr.json", b"{}"), ("c/0", b"\x01\x02")];
    let first = std::fs::read(write_archive(dir.path(), "1.zip", entries)).expect("read");
    let second = std::fs::read(write_archive(dir.path(), "2.zip", entries)).expect("read");
    assert_eq!(first, second);
}

#[test]
fn deflated_entries_are_read_and_threads_can_share_a_reader() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("deflated.zip");
    let chunks: Vec<(String, Vec<u8>)> =
        (0..64u32).map(|i| (format!("c/{i}"), (0..i * 500).map(|b| (b % 7) as u8).collect())).collect();
    let raw: Vec<Raw> = chunks.iter().map(|(n, d)| Raw::deflated(n, d)).collect();
    std::fs::write(&path, build(&raw)).expect("write");
    let reader = ZipReader::open(&path, ZipLimits::default()).expect("open");
    assert!(reader.entries().iter().all(|e| e.method == Method::Deflated));
    std::thread::scope(|scope| {
        for part in reader.entries().chunks(8) {
            let (reader, chunks) = (&reader, &chunks);
            scope.spawn(move || {
                for entry in part {
                    let expected = &chunks.iter().find(|(n, _)| *n == entry.name).expect("known name").1;
                    assert_eq!(&reader.read(entry).expect("read"), expected);
                }
            });
        }
    });
}
