//! Fuzz target: keys and node paths, mutated (`common/fuzz_driver.rs`). Each mutant (bytes made
//! text, lossily) is parsed as a node path, and used as a key on a directory store and a memory
//! store: set, get, size, list, erase. Never a panic, and never a file outside the directory
//! store's folder: `..`, absolute paths, backslashes, NUL and empty segments are refused, not
//! followed.

#[path = "common/fuzz_driver.rs"]
mod fuzz_driver;
#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared generator")]
mod splitmix;

use std::path::Path;

use zarrdb::{DirectoryStore, MemoryStore, NodePath, Store};

fn target(outer: &Path, directory: &DirectoryStore, memory: &MemoryStore, input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    if let Ok(path) = NodePath::parse(&text) {
        let _ = (path.metadata_key(), path.key_prefix(), path.parent(), path.child("x"), path.ancestors());
    }
    let stores: [&dyn Store; 2] = [directory, memory];
    for store in stores {
        if store.set(&text, b"value").is_ok() {
            assert_eq!(store.get(&text).unwrap().as_deref(), Some(&b"value"[..]), "{text:?}");
        }
        let _ = store.size(&text);
        let _ = store.list_prefix(&text);
        let _ = store.list_dir(&text);
        let _ = store.erase(&text);
        let _ = store.erase_prefix(&text);
    }
    // The directory store wrote nothing beside its own folder.
    let names: Vec<_> = std::fs::read_dir(outer).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["store"], "{text:?} escaped the store's folder");
}

fn seeds() -> Vec<Vec<u8>> {
    [
        "a/b/c",
        "g/zarr.json",
        "zarr.json",
        "c/0/0",
        "arr/c/1.2",
        "../escape",
        "a/../../escape",
        "/absolute",
        "a//b",
        "a/./b",
        "a\\b",
        "ünïcode/ключ/数据",
        "__zarrdb/format",
        "a/b/",
        ".",
        "nul\0byte",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .chain(std::iter::once("k/".repeat(200).into_bytes()))
    .collect()
}

#[test]
fn keys_never_panic_or_escape() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    std::fs::create_dir(&root).unwrap();
    let directory = DirectoryStore::open(&root).unwrap();
    let memory = MemoryStore::new();
    fuzz_driver::fuzz("keys", &seeds(), |input| target(dir.path(), &directory, &memory, input));
}
