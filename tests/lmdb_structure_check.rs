//! `verify_on_open` on LMDB (what `zarrdb check` uses) walks every page of the file before LMDB
//! maps it (src/store/lmdb/walk.rs): a sound database of several tree levels, overflow values
//! and freed pages passes; a zeroed page, two swapped pages and a node flag LMDB would follow
//! into a null cursor are each refused as a corrupted database, naming the page. The walk runs on
//! every open unless turned off, so the commands refuse such a file too.

use std::path::{Path, PathBuf};

use zarrdb::error::OpenError;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Error};

const PAGE: usize = 4096;

/// A database whose main tree has branch pages (4,096 small chunks), overflow values (64 KiB
/// chunks) and a free-page tree (everything written three times).
fn build(dir: &Path) -> PathBuf {
    let path = dir.join("db");
    let db = Database::builder().backend(Backend::Lmdb).create(&path).unwrap();
    let small =
        Array::create(db.store(), "/small", ArrayMetadata::new(DataType::UInt16, vec![256, 256], vec![4, 4])).unwrap();
    let big =
        Array::create(db.store(), "/big", ArrayMetadata::new(DataType::UInt8, vec![4, 65536], vec![1, 65536])).unwrap();
    for round in 1..=3u16 {
        let values: Vec<u16> = (0..256 * 256).map(|i| (i as u16).wrapping_mul(round) | 1).collect();
        small.write_region(&[0, 0], &[256, 256], &values).unwrap();
        big.write_region(&[0, 0], &[4, 65536], &vec![round as u8; 4 * 65536]).unwrap();
    }
    path
}

fn verify(path: &Path) -> Result<Database, Error> {
    Database::builder().backend(Backend::Lmdb).verify_on_open(true).read_only(true).open(path)
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// The main tree's root page, from the newer meta page.
fn root(file: &[u8]) -> usize {
    let meta = if u64_at(file, 144) >= u64_at(file, PAGE + 144) { 0 } else { PAGE };
    u64_at(file, meta + 128) as usize
}

/// The child page numbers of branch page `page`.
fn children(file: &[u8], page: usize) -> Vec<usize> {
    let p = &file[page * PAGE..(page + 1) * PAGE];
    assert_eq!(u16_at(p, 10) & 0x01, 0x01, "page {page} is not a branch page");
    let count = (usize::from(u16_at(p, 12)) - 16) / 2;
    (0..count)
        .map(|i| {
            let at = usize::from(u16_at(p, 16 + 2 * i));
            (u64::from(u16_at(p, at)) | u64::from(u16_at(p, at + 2)) << 16 | u64::from(u16_at(p, at + 4)) << 32)
                as usize
        })
        .collect()
}

fn refused_naming(path: &Path, page: usize) {
    match verify(path) {
        Err(Error::Open(OpenError::Corrupted { source, .. })) => {
            assert!(source.to_string().contains(&format!("page {page}")), "the refusal names another page: {source}");
        }
        Err(other) => panic!("refused with the wrong error: {other}"),
        Ok(_) => panic!("the damaged database was accepted"),
    }
}

#[test]
fn a_sound_database_passes() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path());
    let file = std::fs::read(path.join("data.mdb")).unwrap();
    assert!(children(&file, root(&file)).len() > 1, "the main tree should have branch pages");
    let db = verify(&path).unwrap();
    assert_eq!(
        Array::open(db.begin_read().unwrap().store(), "/small").unwrap().read_all::<u16>().unwrap().len(),
        65536
    );
}

/// Build a database, damage its `data.mdb` with `edit` (which returns the page the refusal must
/// name), and check that opening with verification refuses it.
fn refused_after(edit: impl FnOnce(&mut Vec<u8>) -> usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path());
    let data = path.join("data.mdb");
    let mut file = std::fs::read(&data).unwrap();
    let page = edit(&mut file);
    std::fs::write(&data, &file).unwrap();
    refused_naming(&path, page);
}

#[test]
fn a_zeroed_page_is_refused() {
    refused_after(|file| {
        let victim = children(file, root(file))[1];
        file[victim * PAGE..(victim + 1) * PAGE].fill(0);
        victim
    });
}

#[test]
fn swapped_pages_are_refused() {
    refused_after(|file| {
        let kids = children(file, root(file));
        let (a, b) = (kids[0].min(kids[1]), kids[0].max(kids[1]));
        let (low, high) = file.split_at_mut(b * PAGE);
        low[a * PAGE..(a + 1) * PAGE].swap_with_slice(&mut high[..PAGE]);
        kids[0]
    });
}

/// Mark the first node of the first leaf page as holding duplicates, which LMDB would follow
/// into the sub-cursor a plain database does not have; the page damaged.
fn flag_duplicates(file: &mut [u8]) -> usize {
    let mut page = root(file);
    while u16_at(&file[page * PAGE..], 10) & 0x01 == 0x01 {
        page = children(file, page)[0];
    }
    let node = page * PAGE + usize::from(u16_at(&file[page * PAGE..], 16));
    file[node + 4] |= 0x04;
    page
}

#[test]
fn a_duplicate_flag_on_a_leaf_node_is_refused() {
    refused_after(|file| flag_duplicates(file));
}

/// The walk runs on every open by default (`lmdb_check_pages`), so the commands that read a
/// database refuse the duplicate flag too instead of dying of SIGSEGV inside LMDB.
#[test]
fn plain_opens_and_every_command_refuse_a_duplicate_flag() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path());
    let data = path.join("data.mdb");
    let mut file = std::fs::read(&data).unwrap();
    flag_duplicates(&mut file);
    std::fs::write(&data, &file).unwrap();
    for read_only in [false, true] {
        match Database::builder().backend(Backend::Lmdb).read_only(read_only).open(&path) {
            Err(Error::Open(OpenError::Corrupted { .. })) => {}
            Err(other) => panic!("refused with the wrong error: {other}"),
            Ok(_) => panic!("the damaged database was accepted"),
        }
    }
    let locator = path.to_str().unwrap();
    let out = dir.path().join("out");
    for args in [
        vec!["info", locator, "/small"],
        vec!["cat", locator, "/small"],
        vec!["tree", locator],
        vec!["export", locator, out.to_str().unwrap()],
    ] {
        let done = std::process::Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(done.status.code().is_some_and(|c| c != 0), "{args:?} ended with {}: {stderr}", done.status);
        assert!(stderr.contains("not a readable lmdb database"), "{args:?}: {stderr}");
    }
}
