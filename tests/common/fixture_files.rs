//! Fixture files copied before a test opens them, and compared byte for byte after a read-only
//! open.

use std::path::{Path, PathBuf};

/// Copy the file or folder `from` to `to`.
pub fn copy(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}

/// Every file under `path` with its bytes, `lock.mdb` (LMDB's reader table, not data) left out.
pub fn files(path: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    if !path.is_dir() {
        return vec![(path.to_path_buf(), std::fs::read(path).unwrap())];
    }
    let mut all = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "lock.mdb" {
            all.extend(files(&entry.path()));
        }
    }
    all.sort();
    all
}
