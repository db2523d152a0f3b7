//! Target `zip`: a whole zip archive (end-of-central-directory records, the central directory,
//! local headers, names, sizes, CRCs, stored and deflated data), opened as a `ZipStore` (every
//! key listed, sized and read, whole and in part) and as the v3 view an import makes of it.
//!
//! Checked beyond "no panic": a key's value has the size the store gives for it, and a part of
//! it read alone is that part of the whole.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use zarrdb::store::{ByteRange, ListableStore, ReadableStore};
use zarrdb::transfer::ConvertedStore;
use zarrdb::{Store, ZipStore};

/// Where this process writes each input: the reader opens archives by path. In memory
/// (`/dev/shm`) where there is one, the process's own temporary folder otherwise.
fn path() -> &'static PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = DIR.get_or_init(|| {
            let shm = std::path::Path::new("/dev/shm");
            let made = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() };
            made.expect("a temporary folder for the fuzzed archive")
        });
        dir.path().join("fuzzed.zip")
    })
}

/// One input.
pub fn run(data: &[u8]) {
    let path = path();
    std::fs::write(path, data).expect("the fuzzed archive is written");
    if let Ok(zip) = ZipStore::open(path) {
        let zip: Arc<dyn Store> = Arc::new(zip);
        if let Ok(keys) = zip.list() {
            for key in keys {
                let size = zip.size(&key);
                let whole = zip.get(&key);
                let part = zip.get_partial_values(&[(&key, ByteRange::FromStart { offset: 1, length: Some(3) })]);
                if let (Ok(Some(size)), Ok(Some(whole))) = (&size, &whole) {
                    assert_eq!(*size, whole.len() as u64, "{key}: the value is not the size the archive gives");
                    if let (Ok(part), Some(expected)) = (part, whole.get(1..4)) {
                        assert!(part.first() == Some(&Some(expected.to_vec())), "{key}: a part read alone differs");
                    }
                }
            }
        }
        let _ = zip.list_dir("");
    }
    if let Ok(converted) = ConvertedStore::open(path) {
        if let Ok(keys) = converted.list() {
            for key in keys.into_iter().take(64) {
                let _ = converted.get(&key);
            }
        }
    }
}
