//! The File System Store layout: key `a/b/c` is the file `ROOT/a/b/c`.
//!
//! Writes go to a temporary file in the target's folder and are renamed into place, so a reader
//! sees the old or the new value, never a torn one; a crash leaves at most a stray temporary file,
//! which listings skip. There is no multi-key atomicity.

use crate::store::Sealed;
use std::fs;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::folder::{Dir, Entry, EntryKind, Folder, FolderError, MAX_DEPTH};
use super::ChunkVersions;
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
/// deletes outside the folder. Paths are resolved a name at a time from the folder above
/// (`openat` without following links), so a folder swapped for a link while an operation runs is
/// refused too. The import's folder reader goes through the same code.
#[derive(Debug)]
pub struct DirectoryStore {
    folder: Folder,
    /// The chunk versions of the folder, shared by every handle of the process on it.
    versions: Arc<ChunkVersions>,
}

fn io_err<'k>(operation: &'static str, key: &'k str) -> impl FnOnce(io::Error) -> StoreError + 'k {
    move |source| StoreError::Io { operation, key: key.to_owned(), source }
}

/// A folder error as the store's error for `key`.
fn folder_err<'k>(operation: &'static str, key: &'k str) -> impl FnOnce(FolderError) -> StoreError + 'k {
    move |e| match e {
        FolderError::Io { source, .. } => StoreError::Io { operation, key: key.to_owned(), source },
        FolderError::Link { path, reason } => {
            StoreError::Symlink { key: key.to_owned(), link: path.display().to_string(), reason }
        }
    }
}

/// What a folder entry is to the store ([`DirectoryStore::listed`]).
enum Listed<'e> {
    Key(&'e str),
    Folder(&'e str),
    Nothing,
}

fn is_temp(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().starts_with(TEMP_PREFIX.as_bytes())
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
        let refuse = |reason: String, source| StoreError::Open { location: root.display().to_string(), reason, source };
        let failed = |e: io::Error| refuse(e.to_string(), Some(e));
        match fs::metadata(root) {
            Ok(meta) if meta.is_dir() => {
                let folder = Folder::open(root).map_err(failed)?;
                Ok(DirectoryStore { folder, versions: ChunkVersions::of_location(root) })
            }
            Ok(_) => Err(refuse("not a directory".into(), None)),
            Err(e) => Err(failed(e)),
        }
    }

    /// Open a folder as a store, creating it (and its parents) if missing.
    pub fn create(root: impl AsRef<Path>) -> Result<DirectoryStore, StoreError> {
        let root = root.as_ref();
        fs::create_dir_all(root).map_err(|e| StoreError::Open {
            location: root.display().to_string(),
            reason: e.to_string(),
            source: Some(e),
        })?;
        DirectoryStore::open(root)
    }

    /// The folder this store lives in.
    pub fn root(&self) -> &Path {
        self.folder.root()
    }

    /// The file of `key` open for reading, or `None` when the key has no value.
    fn open_file(&self, operation: &'static str, key: &str) -> Result<Option<fs::File>, StoreError> {
        validate_key(key)?;
        self.folder.open_file(key).map_err(folder_err(operation, key))
    }

    /// The keys below `dir` (a folder of the store whose keys start with `rel`), down to
    /// [`MAX_DEPTH`] folders below the root: no key lies deeper.
    fn walk(&self, dir: &Dir, out: &mut Vec<String>) -> Result<(), StoreError> {
        let rel = dir.rel();
        if !rel.is_empty() && rel.split('/').count() > MAX_DEPTH {
            return Ok(());
        }
        let child = |name: &str| if rel.is_empty() { name.to_owned() } else { format!("{rel}/{name}") };
        for entry in self.folder.entries(dir).map_err(folder_err("list", rel))? {
            match self.listed(dir, &entry) {
                Listed::Key(name) => out.push(child(name)),
                Listed::Folder(name) => {
                    let key = child(name);
                    if let Some(inner) = self.folder.subdir(dir, name, false).map_err(folder_err("list", &key))? {
                        self.walk(&inner, out)?;
                    }
                }
                Listed::Nothing => {}
            }
        }
        Ok(())
    }

    /// How the store sees `entry` of `dir`: a key (a file, or a link the store may read: to a
    /// file inside the folder), a folder, or nothing (a write's temporary file, a name that is
    /// not UTF-8, any other link, a socket or a device).
    fn listed<'e>(&self, dir: &Dir, entry: &'e Entry) -> Listed<'e> {
        let Some(name) = entry.name.to_str() else { return Listed::Nothing };
        if is_temp(&entry.name) {
            return Listed::Nothing;
        }
        match entry.kind {
            EntryKind::File => Listed::Key(name),
            EntryKind::Link if self.folder.open_in(dir, name).is_ok_and(|f| f.is_some()) => Listed::Key(name),
            EntryKind::Folder => Listed::Folder(name),
            EntryKind::Link | EntryKind::Other => Listed::Nothing,
        }
    }

    /// The folder `rel` of the store, `None` if it does not exist.
    fn dir(&self, operation: &'static str, rel: &str) -> Result<Option<Dir>, StoreError> {
        if !rel.is_empty() {
            validate_key(rel)?;
        }
        self.folder.dir(rel).map_err(folder_err(operation, rel))
    }
}

impl ReadableStore for DirectoryStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(mut file) = self.open_file("get", key)? else { return Ok(None) };
        let mut value = Vec::new();
        file.read_to_end(&mut value).map_err(io_err("get", key))?;
        Ok(Some(value))
    }

    fn get_partial_values(&self, requests: &[(&str, ByteRange)]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        requests
            .iter()
            .map(|(key, range)| {
                let Some(mut file) = self.open_file("get_partial_values", key)? else { return Ok(None) };
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
        validate_key(key)?;
        self.folder.file_len(key).map_err(folder_err("size", key))
    }
}

impl WritableStore for DirectoryStore {
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        validate_key(key)?;
        let temp = || format!("{TEMP_PREFIX}{}-{}", std::process::id(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed));
        self.folder.write_file(key, value, &temp).map_err(folder_err("set", key))
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
        validate_key(key)?;
        if self.folder.remove_file(key).map_err(folder_err("erase", key))? {
            // Erasing the last key under a prefix makes the prefix disappear, as in a KV store.
            self.folder.remove_empty_folders(key.rsplit_once('/').map_or("", |(dir, _)| dir));
        }
        Ok(())
    }

    fn erase_prefix(&self, prefix: &str) -> Result<(), StoreError> {
        if prefix.is_empty() {
            for key in self.list()? {
                self.erase(&key)?;
            }
            return Ok(());
        }
        if let Some(dir_key) = prefix.strip_suffix('/') {
            validate_key(dir_key)?;
            if self.folder.remove_tree(dir_key).map_err(folder_err("erase_prefix", prefix))? {
                self.folder.remove_empty_folders(dir_key.rsplit_once('/').map_or("", |(dir, _)| dir));
            }
            return Ok(());
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
        let mut out = Vec::new();
        if let Some(dir) = self.dir("list", dir_rel)? {
            self.walk(&dir, &mut out)?;
        }
        out.retain(|k| k.starts_with(prefix));
        out.sort();
        Ok(out)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError> {
        super::check_prefix(prefix)?;
        let mut listing = DirListing::default();
        let Some(dir) = self.dir("list_dir", prefix.strip_suffix('/').unwrap_or(""))? else { return Ok(listing) };
        for entry in self.folder.entries(&dir).map_err(folder_err("list_dir", prefix))? {
            match self.listed(&dir, &entry) {
                Listed::Key(name) => listing.keys.push(name.to_owned()),
                Listed::Folder(name) => {
                    // A prefix exists only while it holds a key; skip folders left empty.
                    let Some(inner) = self.folder.subdir(&dir, name, false).map_err(folder_err("list_dir", prefix))?
                    else {
                        continue;
                    };
                    if self.folder.holds_a_file(&inner, &is_temp).map_err(folder_err("list_dir", prefix))? {
                        listing.prefixes.push(name.to_owned());
                    }
                }
                Listed::Nothing => {}
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

    fn chunk_versions(&self, _sealed: Sealed) -> &ChunkVersions {
        &self.versions
    }
}
