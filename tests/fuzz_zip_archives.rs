//! Fuzz target: whole zip archives, mutated (`common/fuzz_driver.rs`): end-of-central-directory
//! records, central directories, local headers, names, sizes, CRCs, deflated streams. Each mutant
//! is opened as a `ZipStore` (every key listed, sized and read, whole and in part) and as the v3
//! view an import would make of it (`ConvertedStore`): values or errors, never a panic, and no
//! allocation beyond what the archive holds (the reader's own limits).

#[path = "common/fuzz_driver.rs"]
mod fuzz_driver;
#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared generator")]
mod splitmix;

use std::path::Path;
use std::sync::Arc;

use zarrdb::store::{ByteRange, ListableStore};
use zarrdb::transfer::ConvertedStore;
use zarrdb::{Array, ArrayMetadata, DataType, Database, ExportOptions, Group, Store, ZipStore};

fn target(path: &Path, input: &[u8]) {
    std::fs::write(path, input).unwrap();
    if let Ok(zip) = ZipStore::open(path) {
        let zip: Arc<dyn Store> = Arc::new(zip);
        if let Ok(keys) = zip.list() {
            for key in keys {
                let _ = zip.size(&key);
                let _ = zip.get(&key);
                let _ = zip.get_partial_values(&[(&key, ByteRange::FromStart { offset: 1, length: Some(3) })]);
            }
        }
        let _ = zip.list_dir("");
    }
    let _ = ConvertedStore::open(path).map(|c| c.list());
}

/// Archives that zarrdb's export writes: a group, an array with compressed chunks, an array of
/// strings.
fn seeds(dir: &Path) -> Vec<Vec<u8>> {
    let db = Database::create(dir.join("seed.zarrdb")).unwrap();
    let mut attrs = serde_json::Map::new();
    attrs.insert("title".into(), "fuzz".into());
    Group::create(db.store(), "/g", attrs).unwrap();
    let mut meta = ArrayMetadata::new(DataType::Int32, vec![8, 8], vec![4, 4]);
    meta.codecs = zarrdb::metadata::NamedConfig::parse_list(&serde_json::json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}])).unwrap();
    let a = Array::create(db.store(), "/g/a", meta).unwrap();
    a.write_region(&[0, 0], &[8, 8], &(0..64).collect::<Vec<i32>>()).unwrap();
    let b = Array::create(db.store(), "/b", ArrayMetadata::new(DataType::UInt8, vec![5], vec![5])).unwrap();
    b.write_region(&[0], &[5], &[1u8, 2, 3, 4, 5]).unwrap();
    let mut seeds = Vec::new();
    for (name, node) in [("all.zip", "/"), ("group.zip", "/g"), ("array.zip", "/b")] {
        let zip = dir.join(name);
        db.export(&zip, &ExportOptions::default().node(node)).unwrap();
        seeds.push(std::fs::read(zip).unwrap());
    }
    seeds
}

#[test]
fn zip_archives_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = seeds(dir.path());
    let path = dir.path().join("fuzzed.zip");
    fuzz_driver::fuzz("zip_archives", &seeds, |input| target(&path, input));
}
