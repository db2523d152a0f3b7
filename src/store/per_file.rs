//! What every handle of this process on one database file or store folder shares, however its
//! path is spelled (a hard or symbolic link, a relative path): one value per file, found by the
//! file's device and inode, held weakly so it goes when its last handle is dropped.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Arc, OnceLock, Weak};

use parking_lot::Mutex;

/// Values by the device and inode of their file.
type ByFile<T> = Mutex<HashMap<(u64, u64), Weak<T>>>;

/// The values of one kind, by device and inode (a `static` per kind).
pub(crate) struct PerFile<T> {
    values: OnceLock<ByFile<T>>,
}

impl<T: Default> PerFile<T> {
    pub(crate) const fn new() -> PerFile<T> {
        PerFile { values: OnceLock::new() }
    }

    /// The value of the file or folder at `path`; a value of its own when `path` cannot be
    /// inspected (nothing else can name the same file then).
    pub(crate) fn of(&self, path: &Path) -> Arc<T> {
        let Ok(meta) = std::fs::metadata(path) else { return Arc::new(T::default()) };
        let id = (meta.dev(), meta.ino());
        let mut values = self.values.get_or_init(Mutex::default).lock();
        if let Some(value) = values.get(&id).and_then(Weak::upgrade) {
            return value;
        }
        values.retain(|_, value| value.strong_count() > 0);
        let value = Arc::new(T::default());
        values.insert(id, Arc::downgrade(&value));
        value
    }
}

#[cfg(test)]
mod tests {
    use super::PerFile;

    #[test]
    fn every_name_of_a_file_shares_one_value_while_a_handle_holds_it() {
        static VALUES: PerFile<parking_lot::Mutex<u32>> = PerFile::new();
        let dir = tempfile::tempdir().unwrap();
        let (file, hard, soft) = (dir.path().join("f"), dir.path().join("h"), dir.path().join("s"));
        std::fs::write(&file, b"").unwrap();
        std::fs::hard_link(&file, &hard).unwrap();
        std::os::unix::fs::symlink(&file, &soft).unwrap();
        let first = VALUES.of(&file);
        *first.lock() = 7;
        assert_eq!(*VALUES.of(&hard).lock(), 7);
        assert_eq!(*VALUES.of(&soft).lock(), 7);
        let other = dir.path().join("g");
        std::fs::write(&other, b"").unwrap();
        assert_eq!(*VALUES.of(&other).lock(), 0);
        assert_eq!(*VALUES.of(&dir.path().join("missing")).lock(), 0);
        drop(first);
        assert_eq!(*VALUES.of(&file).lock(), 0, "a value goes with its last handle");
    }
}
