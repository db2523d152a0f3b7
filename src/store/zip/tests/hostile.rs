//! Archives built byte by byte, each breaking one rule: the reader must refuse them with the
//! matching error, at open where the central directory already shows the problem.

use super::{build, crc32, deflate, eocd, open_bytes, patch, Raw};
use crate::error::ZipError;
use crate::store::zip::ZipLimits;

fn open(bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, ZipError> {
    open_bytes(bytes, ZipLimits::default())
}

fn sample() -> Vec<u8> {
    build(&[Raw::stored("zarr.json", b"{\"zarr_format\": 3}"), Raw::deflated("c/0/0", &[7; 5000])])
}

#[test]
fn the_sample_is_valid() {
    let entries = open(&sample()).expect("valid");
    assert_eq!(entries[0], ("zarr.json".to_owned(), b"{\"zarr_format\": 3}".to_vec()));
    assert_eq!(entries[1], ("c/0/0".to_owned(), vec![7; 5000]));
}

#[test]
fn empty_and_garbage_files_are_not_zips() {
    for bytes in [&b""[..], b"PK", &[0u8; 21], &[0xAB; 100_000]] {
        assert!(matches!(open(bytes), Err(ZipError::NotAZip { .. })), "{} bytes", bytes.len());
    }
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = sample();
    for cut in 0..bytes.len() {
        assert!(open(&bytes[..cut]).is_err(), "cut at {cut}");
    }
}

#[test]
fn a_central_directory_outside_the_file_is_refused() {
    let mut bytes = sample();
    let at = eocd(&bytes);
    patch(&mut bytes, at + 16, &0xFFFF_FF00u32.to_le_bytes());
    assert!(matches!(open(&bytes), Err(ZipError::Truncated { .. })), "{:?}", open(&bytes));
    let mut bytes = sample();
    patch(&mut bytes, at + 12, &0x7FFF_FFFFu32.to_le_bytes());
    assert!(matches!(open(&bytes), Err(ZipError::Truncated { .. })), "{:?}", open(&bytes));
}

#[test]
fn a_lying_entry_count_is_refused() {
    for count in [1u16, 3, 0xFFFE] {
        let mut bytes = sample();
        let at = eocd(&bytes);
        patch(&mut bytes, at + 8, &count.to_le_bytes());
        patch(&mut bytes, at + 10, &count.to_le_bytes());
        assert!(matches!(open(&bytes), Err(ZipError::Malformed { .. })), "count {count}: {:?}", open(&bytes));
    }
    // Long names leave room for more fixed headers than there are entries: parsing runs out.
    let long = "n".repeat(60);
    let mut bytes = build(&[Raw::stored(&long, b"1"), Raw::stored(&format!("{long}2"), b"2")]);
    let at = eocd(&bytes);
    patch(&mut bytes, at + 8, &4u16.to_le_bytes());
    patch(&mut bytes, at + 10, &4u16.to_le_bytes());
    assert!(matches!(open(&bytes), Err(ZipError::Malformed { .. })), "{:?}", open(&bytes));
}

#[test]
fn a_count_over_the_limit_is_refused() {
    let limits = ZipLimits { max_entries: 1, ..ZipLimits::default() };
    let err = open_bytes(&sample(), limits).unwrap_err();
    assert!(matches!(err, ZipError::TooManyEntries { count: 2, limit: 1, .. }), "{err:?}");
}

#[test]
fn a_local_name_differing_from_the_central_one_is_refused() {
    let mut entry = Raw::stored("c/0/0", b"data");
    entry.local_name = b"c/0/1".to_vec();
    let err = open(&build(&[entry])).unwrap_err();
    assert!(
        matches!(&err, ZipError::NameMismatch { entry, local_name, .. } if entry == "c/0/0" && local_name == "c/0/1")
    );
}

#[test]
fn a_stored_entry_with_two_sizes_is_refused() {
    let mut entry = Raw::stored("c/0/0", b"data");
    entry.size = 3;
    let err = open(&build(&[entry])).unwrap_err();
    assert!(matches!(err, ZipError::SizeMismatch { declared: 3, actual: 4, .. }), "{err:?}");
}

#[test]
fn a_deflated_entry_with_a_wrong_size_is_refused() {
    for (declared, actual) in [(999, 1000), (1001, 1000), (0, 1)] {
        let mut entry = Raw::deflated("c/0/0", &[1; 1000]);
        entry.size = declared;
        let err = open(&build(&[entry])).unwrap_err();
        assert!(
            matches!(err, ZipError::SizeMismatch { declared: d, actual: a, .. } if u64::from(declared) == d && a == actual),
            "declared {declared}: {err:?}"
        );
    }
}

#[test]
fn a_wrong_crc_is_refused() {
    for mut entry in [Raw::stored("a", b"data"), Raw::deflated("b", b"data"), Raw::stored("c", b"")] {
        entry.crc32 ^= 1;
        let err = open(&build(&[entry])).unwrap_err();
        assert!(matches!(err, ZipError::CrcMismatch { .. }), "{err:?}");
    }
}

#[test]
fn encrypted_entries_are_refused() {
    let mut entry = Raw::stored("secret", b"data");
    entry.flags = 1;
    // AES-encrypted entries also carry method 99: the encryption is the thing to report.
    entry.method = 99;
    let err = open(&build(&[entry])).unwrap_err();
    assert!(matches!(&err, ZipError::Encrypted { entry, .. } if entry == "secret"), "{err:?}");
}

#[test]
fn other_methods_are_refused() {
    let mut entry = Raw::stored("c/0/0", b"data");
    entry.method = 12;
    let err = open(&build(&[entry])).unwrap_err();
    assert!(matches!(err, ZipError::UnsupportedMethod { method: 12, .. }), "{err:?}");
}

#[test]
fn a_local_header_naming_another_method_is_refused() {
    let mut entry = Raw::stored("c/0/0", b"data");
    entry.local_method = 8;
    let err = open(&build(&[entry])).unwrap_err();
    assert!(matches!(err, ZipError::MalformedEntry { .. }), "{err:?}");
}

#[test]
fn non_utf8_names_are_refused_and_utf8_names_accepted_with_or_without_the_flag() {
    let err = open(&build(&[Raw::stored("x", b"").with_names(b"caf\xe9")])).unwrap_err();
    assert!(matches!(&err, ZipError::NonUtf8Name { name, .. } if name == "caf\\xe9"), "{err:?}");
    let mut flagged = Raw::stored("x", b"").with_names(b"caf\xe9");
    flagged.flags = 1 << 11;
    assert!(matches!(open(&build(&[flagged])), Err(ZipError::NonUtf8Name { .. })));
    let mut entries = [Raw::stored("café", b"1"), Raw::stored("日本", b"2")];
    entries[1].flags = 1 << 11;
    let read = open(&build(&entries)).expect("UTF-8 names");
    assert_eq!(read.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["café", "日本"]);
}

#[test]
fn a_zip_bomb_is_refused_before_inflating() {
    // Declared 2 GiB from 1 KiB of (corrupt) deflate data: open must refuse it from the sizes alone.
    let mut entry = Raw::deflated("c/0/0", b"x");
    entry.size = 2 << 30;
    entry.data = vec![0; 1024];
    entry.compressed_size = 1024;
    let err = open(&build(&[entry])).unwrap_err();
    assert!(matches!(err, ZipError::ZipBomb { size: 0x8000_0000, compressed_size: 1024, .. }), "{err:?}");
    // Real data over the ratio is refused too, unless it is at most 1 MiB.
    let limits = ZipLimits { max_ratio: 100, ..ZipLimits::default() };
    let zeros = vec![0u8; 8 << 20];
    let err = open_bytes(&build(&[Raw::deflated("big", &zeros)]), limits.clone()).unwrap_err();
    assert!(matches!(err, ZipError::ZipBomb { max_ratio: 100, .. }), "{err:?}");
    assert!(open_bytes(&build(&[Raw::deflated("small", &zeros[..1 << 20])]), limits).is_ok());
}

#[test]
fn an_entry_over_the_size_limit_is_refused() {
    let limits = ZipLimits { max_entry_size: 100, ..ZipLimits::default() };
    let err = open_bytes(&build(&[Raw::stored("c", &[0; 101])]), limits.clone()).unwrap_err();
    assert!(matches!(err, ZipError::TooLarge { size: 101, limit: 100, .. }), "{err:?}");
    assert!(open_bytes(&build(&[Raw::stored("c", &[0; 100])]), limits).is_ok());
}

#[test]
fn duplicates_keep_the_last_entry_in_its_place() {
    let bytes = build(&[
        Raw::stored("a", b"first a"),
        Raw::stored("b", b"b"),
        Raw::stored("a", b"second a"),
        Raw::stored("c", b"first c"),
        Raw::stored("a", b"third a"),
        Raw::stored("c", b"second c"),
    ]);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("dup.zip");
    std::fs::write(&path, &bytes).expect("write");
    let reader = crate::store::zip::ZipReader::open(&path, ZipLimits::default()).expect("open");
    assert_eq!(reader.duplicates(), ["a", "c"]);
    let read: Vec<(String, Vec<u8>)> =
        reader.entries().iter().map(|e| (e.name.clone(), reader.read(e).expect("read"))).collect();
    let expected = [("b", &b"b"[..]), ("a", b"third a"), ("c", b"second c")];
    assert_eq!(read, expected.map(|(n, d)| (n.to_owned(), d.to_vec())));
}

#[test]
fn directory_entries_are_left_out() {
    let bytes = build(&[Raw::stored("top/", b""), Raw::stored("top/zarr.json", b"{}"), Raw::stored("top/c/", b"")]);
    assert_eq!(open(&bytes).expect("open"), [("top/zarr.json".to_owned(), b"{}".to_vec())]);
}

#[test]
fn entries_sharing_or_overrunning_space_are_refused() {
    // Two central entries pointing at one local header: the overlapping-entry bomb's trick.
    let mut second = Raw::stored("b", b"bbbb");
    second.offset = Some(0);
    let err = open(&build(&[Raw::stored("a", b"aaaa"), second])).unwrap_err();
    assert!(matches!(err, ZipError::Overlap { .. }), "{err:?}");
    // An offset far beyond the data.
    let mut far = Raw::stored("a", b"aaaa");
    far.offset = Some(0xFFFF_FFF0);
    let err = open(&build(&[far])).unwrap_err();
    assert!(matches!(err, ZipError::Overlap { .. }), "{err:?}");
    // Data claimed to run into the next entry's header.
    let mut long = Raw::stored("a", b"aaaa");
    (long.size, long.compressed_size) = (40, 40);
    let err = open(&build(&[long, Raw::stored("b", b"b")])).unwrap_err();
    assert!(matches!(err, ZipError::Overlap { .. }), "{err:?}");
    // Only the local extra field (unknown at open) pushes the data into the central directory.
    let mut extra = Raw::stored("a", b"aaaa");
    extra.local_extra = vec![0xAA, 0xBB, 4, 0, 1, 2, 3, 4];
    extra.data.truncate(0);
    let err = open(&build(&[extra])).unwrap_err();
    assert!(matches!(err, ZipError::Overlap { .. }), "{err:?}");
}

#[test]
fn corrupt_deflate_data_is_refused() {
    let mut entry = Raw::deflated("c/0/0", &[3; 1000]);
    entry.data = vec![0xFF; entry.data.len()];
    let err = open(&build(&[entry])).unwrap_err();
    assert!(matches!(err, ZipError::MalformedEntry { .. } | ZipError::SizeMismatch { .. }), "{err:?}");
}

#[test]
fn zip64_fields_are_required_when_saturated_and_used_when_present() {
    let mut missing = Raw::stored("a", b"data");
    missing.offset = Some(0xFFFF_FFFF);
    let err = open(&build(&[missing])).unwrap_err();
    assert!(matches!(err, ZipError::MalformedEntry { .. }), "{err:?}");
    // All three saturated, values in the extra field in the APPNOTE's order.
    let mut full = Raw::deflated("a", &[5; 300]);
    let (size, compressed) = (u64::from(full.size), u64::from(full.compressed_size));
    (full.size, full.compressed_size, full.offset) = (0xFFFF_FFFF, 0xFFFF_FFFF, Some(0xFFFF_FFFF));
    full.central_extra =
        [&[1u8, 0, 24, 0][..], &size.to_le_bytes(), &compressed.to_le_bytes(), &0u64.to_le_bytes()].concat();
    assert_eq!(open(&build(&[full.clone()])).expect("zip64 extra"), [("a".to_owned(), vec![5; 300])]);
    // A field cut off, and an extra block overrunning the extra data.
    full.central_extra.truncate(4 + 16);
    full.central_extra[2] = 16;
    assert!(matches!(open(&build(&[full.clone()])), Err(ZipError::MalformedEntry { .. })));
    full.central_extra[2] = 200;
    assert!(matches!(open(&build(&[full])), Err(ZipError::MalformedEntry { .. })));
}

#[test]
fn trailing_bytes_are_tolerated_but_a_prefix_is_not() {
    let mut trailing = sample();
    trailing.extend_from_slice(b"trailing junk");
    assert_eq!(open(&trailing).expect("trailing bytes"), open(&sample()).expect("sample"));
    let prefixed = [&b"#!/bin/sh stub\n"[..], &sample()].concat();
    assert!(matches!(open(&prefixed), Err(ZipError::Malformed { .. })), "{:?}", open(&prefixed));
}

#[test]
fn the_deflate_fixture_helper_matches_the_crc() {
    // Guards the fixtures themselves: a broken helper would make the tests above pass vacuously.
    let data = b"abcabcabc";
    assert_eq!(crc32(data), 0x462D_4818);
    assert!(deflate(data).len() < 20);
}

#[test]
fn zip64_end_records_must_agree_and_be_where_the_locator_says() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("zip64.zip");
    let mut writer = crate::store::zip::ZipWriter::create_forcing_zip64(&path).expect("create");
    writer.add("a", b"1").expect("add");
    writer.add("b", b"2").expect("add");
    writer.finish().expect("finish");
    let good = std::fs::read(&path).expect("read");
    assert_eq!(open(&good).expect("valid").len(), 2);
    let at = eocd(&good);
    let locator = at - 20;
    // A classic count that is not saturated must match the Zip64 one.
    let mut bytes = good.clone();
    patch(&mut bytes, at + 8, &1u16.to_le_bytes());
    patch(&mut bytes, at + 10, &1u16.to_le_bytes());
    assert!(matches!(open(&bytes), Err(ZipError::Malformed { .. })), "{:?}", open(&bytes));
    // The locator pointing elsewhere, past itself, or at a record whose size leaves a gap.
    for record in [0u64, locator as u64 - 10, u64::MAX - 3] {
        let mut bytes = good.clone();
        patch(&mut bytes, locator + 8, &record.to_le_bytes());
        assert!(matches!(open(&bytes), Err(ZipError::Malformed { .. })), "{record}: {:?}", open(&bytes));
    }
    let mut bytes = good.clone();
    patch(&mut bytes, locator - 56 + 4, &45u64.to_le_bytes());
    assert!(matches!(open(&bytes), Err(ZipError::Malformed { .. })), "{:?}", open(&bytes));
    // A Zip64 count too large for the directory.
    let mut bytes = good;
    patch(&mut bytes, locator - 56 + 24, &[1000u64.to_le_bytes(), 1000u64.to_le_bytes()].concat());
    assert!(matches!(open(&bytes), Err(ZipError::Malformed { .. })), "{:?}", open(&bytes));
}
