//! The File System Store layout: key `a/b/c` is the file `ROOT/a/b/c`.
//!
//! Writes go to a temporary file in the target's folder and are renamed into place, so a reader
//! sees the old or the new value, never a torn one; a crash leaves at most a stray temporary file,
//! which listings skip. There is no multi-key atomicity.

use std::fs;
use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{
    validate_key, ByteRange, DirListing, ListableStore, ReadableStore, Store, StoreCapabilities, WritableStore,
};
use crate::error::StoreError;

/// Temporary files start with this; they are never keys.
const TEMP_PREFIX: &str = ".zarrdb-tmp-";

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A Zarr hierarchy in a folder of the local file system.
///
/// Symbolic links: the folders on a key's path must be real folders, never links, and a key's
/// own file may be a link only to a file inside the store's folder (read like that file; writing
/// or erasing the key replaces or removes the link, never its target). Anything else is refused
/// with `StoreError::Symlink`, and listings leave such links out, so no operation reads, writes or
/// deletes outside the folder (the import reader, `transfer/source.rs`, applies the same rules).
#[derive(Debug)]
pub struct DirectoryStore {
    root: PathBuf,
    /// The root with every link resolved: where a linked file's target must lie.
    canonical_root: PathBuf,
}

fn io_err<'k>(operation: &'static str, key: &'k str) -> impl FnOnce(io::Error) -> StoreError + 'k {
    move |source| StoreError::Io { operation, key: key.to_owned(), source }
}

impl DirectoryStore {
    /// Open an existing folder as a store.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = zarrdb::DirectoryStore::open(dir.path()).unwrap();
    /// assert!(zarrdb::DirectoryStore::open(dir.path().join("missing")).is_err());
    /// ```
    pub fn open(root: impl AsRef<Path>) -> Result<DirectoryStore, StoreError> {
        let root = root.as_ref();
        match fs::metadata(root) {
            Ok(meta) if meta.is_dir() => {
                let canonical_root = root
                    .canonicalize()
                    .map_err(|e| StoreError::Open { location: root.display().to_string(), reason: e.to_string() })?;
                Ok(DirectoryStore { root: root.to_path_buf(), canonical_root })
            }
            Ok(_) => Err(StoreError::Open { location: root.display().to_string(), reason: "not a directory".into() }),
            Err(e) => Err(StoreError::Open { location: root.display().to_string(), reason: e.to_string() }),
        }
    }

    /// Open a folder as a store, creating it (and its parents) if missing.
    pub fn create(root: impl AsRef<Path>) -> Result<DirectoryStore, StoreError> {
        let root = root.as_ref();
        fs::create_dir_all(root)
            .map_err(|e| StoreError::Open { location: root.display().to_string(), reason: e.to_string() })?;
        DirectoryStore::open(root)
    }

    /// The folder this store lives in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file of `key`, after checking that no folder on its way is a link.
    fn path(&self, key: &str) -> Result<PathBuf, StoreError> {
        validate_key(key)?;
        let mut dir = self.root.clone();
        let mut names = key.split('/').peekable();
        while let Some(name) = names.next() {
            if names.peek().is_none() {
                return Ok(dir.join(name));
            }
            dir.push(name);
            match fs::symlink_metadata(&dir) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(self.symlink(key, &dir, "to a folder on the key's path"))
                }
                Ok(_) => {}
                // Nothing further down exists, so no link either.
                Err(_) => return Ok(self.root.join(key)),
            }
        }
        Ok(self.root.join(key))
    }

    /// The file to read for `key`: its path, or a linked file's target inside the root.
    fn read_path(&self, key: &str) -> Result<PathBuf, StoreError> {
        let path = self.path(key)?;
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => self.linked_file(key, &path),
            _ => Ok(path),
        }
    }

    /// The target of the link `link` (the file of `key`) when it is a file inside the root.
    fn linked_file(&self, key: &str, link: &Path) -> Result<PathBuf, StoreError> {
        let target = link.canonicalize().map_err(|_| self.symlink(key, link, "whose target does not exist"))?;
        if !target.starts_with(&self.canonical_root) {
            return Err(self.symlink(key, link, "pointing outside the store's folder"));
        }
        if !target.is_file() {
            return Err(self.symlink(key, link, "to a folder"));
        }
        Ok(target)
    }

    fn symlink(&self, key: &str, link: &Path, reason: &'static str) -> StoreError {
        StoreError::Symlink { key: key.to_owned(), link: link.display().to_string(), reason }
    }

    /// Remove now-empty folders from `dir` up to (not including) the root, so that erasing the
    /// last key under a prefix makes the prefix disappear from listings, as in a KV store.
    fn prune_empty(&self, mut dir: &Path) {
        while dir != self.root && dir.starts_with(&self.root) {
            // Fails (harmlessly) when the folder is not empty or already gone.
            if fs::remove_dir(dir).is_err() {
                break;
            }
            match dir.parent() {
                Some(parent) => dir = parent,
                None => break,
            }
        }
    }

    fn walk(&self, dir: &Path, rel: &str, out: &mut Vec<String>) -> Result<(), StoreError> {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_err("list", rel)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(io_err("list", rel))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
            if name.starts_with(TEMP_PREFIX) {
                continue;
            }
            let key = format!("{rel}{name}");
            // file_type does not follow symlinks: a link is never followed out of the root.
            let ty = entry.file_type().map_err(io_err("list", &key))?;
            if ty.is_dir() {
                self.walk(&entry.path(), &format!("{key}/"), out)?;
            } else if ty.is_file() || (ty.is_symlink() && self.linked_file(&key, &entry.path()).is_ok()) {
                out.push(key);
            }
        }
        Ok(())
    }
}

/// Whether a folder holds a key somewhere below it; stops at the first one found, so a chunk
/// folder with millions of files costs one directory entry, not a full walk.
fn holds_a_file(dir: &Path) -> io::Result<bool> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_str().is_some_and(|n| n.starts_with(TEMP_PREFIX)) {
            continue;
        }
        let ty = entry.file_type()?;
        if ty.is_file() || (ty.is_dir() && holds_a_file(&entry.path())?) {
            return Ok(true);
        }
    }
    Ok(false)
}

impl ReadableStore for DirectoryStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.read_path(key)?;
        match fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory | ErrorKind::IsADirectory) => {
                Ok(None)
            }
            Err(e) => Err(io_err("get", key)(e)),
        }
    }

    fn get_partial_values(&self, requests: &[(&str, ByteRange)]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        requests
            .iter()
            .map(|(key, range)| {
                let path = self.read_path(key)?;
                let mut file = match fs::File::open(&path) {
                    Ok(file) => file,
                    Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => return Ok(None),
                    Err(e) => return Err(io_err("get_partial_values", key)(e)),
                };
                let len = file.metadata().map_err(io_err("get_partial_values", key))?.len();
                let r = range.resolve(len).ok_or_else(|| StoreError::RangeOutOfBounds {
                    key: (*key).to_owned(),
                    range: range.describe(),
                    len,
                })?;
                file.seek(SeekFrom::Start(r.start as u64)).map_err(io_err("get_partial_values", key))?;
                let mut buf = vec![0; r.len()];
                file.read_exact(&mut buf).map_err(io_err("get_partial_values", key))?;
                Ok(Some(buf))
            })
            .collect()
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        let path = self.read_path(key)?;
        match fs::metadata(&path) {
            Ok(meta) if meta.is_file() => Ok(Some(meta.len())),
            Ok(_) => Ok(None),
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => Ok(None),
            Err(e) => Err(io_err("size", key)(e)),
        }
    }
}

impl WritableStore for DirectoryStore {
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let path = self.path(key)?;
        let dir = path.parent().expect("a key path is below the root");
        fs::create_dir_all(dir).map_err(io_err("set", key))?;
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!("{TEMP_PREFIX}{}-{n}", std::process::id()));
        let result = (|| {
            let mut file = fs::File::create(&temp)?;
            file.write_all(value)?;
            fs::rename(&temp, &path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result.map_err(io_err("set", key))
    }

    fn set_partial_values(&self, writes: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        // Files can be patched in place, but that would let a reader see a torn value; a directory
        // store therefore rewrites the value whole (get, patch, set), key by key.
        for (key, offset, bytes) in writes {
            let mut value = self.get(key)?.unwrap_or_default();
            let start = *offset as usize;
            if start > value.len() {
                return Err(StoreError::RangeOutOfBounds {
                    key: (*key).to_owned(),
                    range: format!("{offset}.."),
                    len: value.len() as u64,
                });
            }
            let end = start + bytes.len();
            if value.len() < end {
                value.resize(end, 0);
            }
            value[start..end].copy_from_slice(bytes);
            self.set(key, &value)?;
        }
        Ok(())
    }

    fn erase(&self, key: &str) -> Result<(), StoreError> {
        let path = self.path(key)?;
        match fs::remove_file(&path) {
            Ok(()) => {
                self.prune_empty(path.parent().expect("a key path is below the root"));
                Ok(())
            }
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => Ok(()),
            Err(e) if e.kind() == ErrorKind::IsADirectory => Ok(()),
            Err(e) => Err(io_err("erase", key)(e)),
        }
    }

    fn erase_prefix(&self, prefix: &str) -> Result<(), StoreError> {
        if prefix.is_empty() {
            for key in self.list()? {
                self.erase(&key)?;
            }
            return Ok(());
        }
        if let Some(dir_key) = prefix.strip_suffix('/') {
            let path = self.path(dir_key)?;
            return match fs::remove_dir_all(&path) {
                Ok(()) => {
                    self.prune_empty(path.parent().expect("below the root"));
                    Ok(())
                }
                Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io_err("erase_prefix", prefix)(e)),
            };
        }
        for key in self.list_prefix(prefix)? {
            self.erase(&key)?;
        }
        Ok(())
    }
}

impl ListableStore for DirectoryStore {
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        // Walk only the deepest folder that contains every candidate key.
        let (dir_rel, _) = prefix.rsplit_once('/').unwrap_or(("", prefix));
        let dir = if dir_rel.is_empty() { self.root.clone() } else { self.path(dir_rel)? };
        let mut out = Vec::new();
        self.walk(&dir, &if dir_rel.is_empty() { String::new() } else { format!("{dir_rel}/") }, &mut out)?;
        out.retain(|k| k.starts_with(prefix));
        out.sort();
        Ok(out)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError> {
        super::check_prefix(prefix)?;
        let dir = match prefix.strip_suffix('/') {
            Some(rel) => self.path(rel)?,
            None => self.root.clone(),
        };
        let mut listing = DirListing::default();
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => return Ok(listing),
            Err(e) => return Err(io_err("list_dir", prefix)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(io_err("list_dir", prefix))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
            if name.starts_with(TEMP_PREFIX) {
                continue;
            }
            let ty = entry.file_type().map_err(io_err("list_dir", prefix))?;
            if ty.is_file() || (ty.is_symlink() && self.linked_file(&name, &entry.path()).is_ok()) {
                listing.keys.push(name);
            } else if ty.is_dir() {
                // A prefix exists only while it holds a key; skip folders left empty.
                if holds_a_file(&entry.path()).map_err(io_err("list_dir", prefix))? {
                    listing.prefixes.push(name);
                }
            }
        }
        listing.keys.sort();
        listing.prefixes.sort();
        Ok(listing)
    }
}

impl Store for DirectoryStore {
    fn capabilities(&self) -> StoreCapabilities {
        StoreCapabilities {
            readable: true,
            writable: true,
            partial_writes: true,
            listable: true,
            atomic_multi_key: false,
            stable_snapshots: false,
        }
    }

    fn kind(&self) -> &'static str {
        "directory"
    }
}
