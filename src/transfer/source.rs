//! Where a transfer reads from: a folder, a zip archive, or any store (a database snapshot when
//! exporting). A source lists its keys with their sizes once, then hands out values by key, from
//! several threads at once.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use super::error::{io_error, TransferError};
use crate::error::Error;
use crate::key::untrusted as key;
use crate::store::folder::{Dir, EntryKind, Folder, FolderError};
use crate::store::zip::{ZipEntry, ZipLimits, ZipReader};
use crate::store::Store;

/// One key of a source and the size of its value when listed.
pub(crate) struct Listed {
    pub key: String,
    pub size: u64,
}

/// A hierarchy to read from.
pub(crate) trait Source: Sync {
    /// The folder, archive or store, for messages.
    fn describe(&self) -> String;

    /// Every key, relative to the hierarchy's root.
    fn list(&self) -> Result<Vec<Listed>, Error>;

    /// The value of a listed key.
    fn read(&self, key: &str) -> Result<Vec<u8>, Error>;

    /// The values of several listed keys, in order; by default read in parallel.
    fn read_many(&self, keys: &[&str]) -> Result<Vec<Vec<u8>>, Error> {
        keys.par_iter().map(|key| self.read(key)).collect()
    }

    /// Names that occurred more than once, of which the last was kept (zip archives).
    fn duplicates(&self) -> Vec<String> {
        Vec::new()
    }

    /// The folder inside the source that holds the hierarchy, given every key: "" (the source's
    /// root) except for an archive made from the hierarchy's parent folder.
    fn hierarchy_folder(&self, _keys: &[String]) -> String {
        String::new()
    }
}

fn file_id(meta: &fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// Open a folder or a zip file.
pub(crate) fn open_path(path: &Path) -> Result<Box<dyn Source + Send>, Error> {
    let meta = fs::metadata(path).map_err(|_| TransferError::SourceNotFound { path: path.display().to_string() })?;
    if meta.is_dir() {
        let folder = Folder::open(path).map_err(io_error("open", path))?;
        Ok(Box::new(DirSource { folder, files: OnceLock::new() }))
    } else if meta.is_file() {
        Ok(Box::new(ZipSource::open(path)?))
    } else {
        Err(TransferError::SourceNotFound { path: path.display().to_string() }.into())
    }
}

/// A folder in the File System Store layout (each key a file; `/` separates folders), read with
/// the directory store's policy on links (`store::folder`): folders on a key's path must be real
/// folders, and a key's file may link only to a file inside the folder.
struct DirSource {
    folder: Folder,
    /// The file (device, inode) each key named when listed. A read must open that same file: a
    /// file replaced since the listing is refused rather than read.
    files: OnceLock<HashMap<String, (FileId, u64)>>,
}

/// Device and inode number.
type FileId = (u64, u64);

/// The largest file read from a folder, as for zip entries (`ZipLimits::max_entry_size`).
const MAX_FILE_SIZE: u64 = 4 << 30;

/// A folder error as the transfer's error.
fn folder_error(e: FolderError) -> TransferError {
    match e {
        FolderError::Io { operation, path, source } => {
            TransferError::Io { operation, path: path.display().to_string(), source }
        }
        FolderError::Link { path, reason } => TransferError::Symlink { path: path.display().to_string(), reason },
    }
}

impl DirSource {
    fn walk(&self, dir: &Dir, out: &mut Vec<(Listed, FileId)>) -> Result<(), Error> {
        let described = self.describe();
        for entry in self.folder.entries(dir).map_err(folder_error)? {
            let Some(name) = entry.name.to_str() else {
                return Err(TransferError::UnsafeName {
                    source_path: described,
                    name: entry.name.to_string_lossy().into_owned(),
                    reason: "not UTF-8",
                }
                .into());
            };
            let key = if dir.rel().is_empty() { name.to_owned() } else { format!("{}/{name}", dir.rel()) };
            key::check(&described, &key)?;
            match entry.kind {
                EntryKind::Folder => {
                    if let Some(inner) = self.folder.subdir(dir, name, false).map_err(folder_error)? {
                        self.walk(&inner, out)?;
                    }
                }
                EntryKind::File | EntryKind::Link => {
                    // A link that leaves the folder or points to a folder is refused here.
                    let Some(file) = self.folder.open_in(dir, name).map_err(folder_error)? else { continue };
                    let path = self.folder.path(&key);
                    let meta = file.metadata().map_err(io_error("inspect", &path))?;
                    out.push((self.listed(key, &meta)?, file_id(&meta)));
                }
                // Sockets, FIFOs and devices hold no Zarr data; they are left out.
                EntryKind::Other => {}
            }
        }
        Ok(())
    }

    fn listed(&self, key: String, meta: &fs::Metadata) -> Result<Listed, Error> {
        if meta.len() > MAX_FILE_SIZE {
            return Err(TransferError::ValueTooLarge {
                source_path: self.describe(),
                key,
                size: meta.len(),
                limit: MAX_FILE_SIZE,
            }
            .into());
        }
        Ok(Listed { key, size: meta.len() })
    }
}

impl Source for DirSource {
    fn describe(&self) -> String {
        format!("folder \"{}\"", self.folder.root().display())
    }

    fn list(&self) -> Result<Vec<Listed>, Error> {
        let mut found = Vec::new();
        let root = self.folder.dir("").map_err(folder_error)?.expect("the root is a folder");
        self.walk(&root, &mut found)?;
        found.sort_by(|a, b| a.0.key.cmp(&b.0.key));
        let files = found.iter().map(|(l, id)| (l.key.clone(), (*id, l.size))).collect();
        let _ = self.files.set(files);
        Ok(found.into_iter().map(|(l, _)| l).collect())
    }

    fn read(&self, key: &str) -> Result<Vec<u8>, Error> {
        let path = self.folder.path(key);
        let vanished = || TransferError::SourceVanished { source_path: self.describe(), key: key.to_owned() };
        let &(listed, size) = self.files.get().and_then(|f| f.get(key)).ok_or_else(vanished)?;
        let file = self.folder.open_file(key).map_err(folder_error)?.ok_or_else(vanished)?;
        let meta = file.metadata().map_err(io_error("inspect", &path))?;
        if file_id(&meta) != listed {
            return Err(TransferError::Symlink {
                path: path.display().to_string(),
                reason: "it is no longer the file that was listed (a folder or link on its path changed)",
            }
            .into());
        }
        // At most one byte more than listed: a file that grew is caught without reading it all.
        let mut value = Vec::with_capacity(size as usize);
        std::io::Read::read_to_end(&mut std::io::Read::take(file, size + 1), &mut value)
            .map_err(io_error("read", &path))?;
        Ok(value)
    }
}

/// A zip archive. Names are checked when it is opened, so a hostile name fails the transfer
/// before anything is written.
struct ZipSource {
    path: PathBuf,
    reader: ZipReader,
    /// Key -> index into the reader's entries.
    index: HashMap<String, usize>,
}

impl ZipSource {
    fn open(path: &Path) -> Result<ZipSource, Error> {
        let reader = ZipReader::open(path, ZipLimits::default()).map_err(TransferError::from)?;
        let described = format!("zip archive \"{}\"", path.display());
        let mut index = HashMap::with_capacity(reader.entries().len());
        for (i, entry) in reader.entries().iter().enumerate() {
            key::check(&described, &entry.name)?;
            index.insert(entry.name.clone(), i);
        }
        Ok(ZipSource { path: path.to_path_buf(), reader, index })
    }

    fn entry(&self, key: &str) -> &ZipEntry {
        &self.reader.entries()[self.index[key]]
    }
}

impl Source for ZipSource {
    fn describe(&self) -> String {
        format!("zip archive \"{}\"", self.path.display())
    }

    fn list(&self) -> Result<Vec<Listed>, Error> {
        let mut out: Vec<Listed> =
            self.reader.entries().iter().map(|e| Listed { key: e.name.clone(), size: e.size }).collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    fn read(&self, key: &str) -> Result<Vec<u8>, Error> {
        Ok(self.reader.read(self.entry(key)).map_err(TransferError::from)?)
    }

    fn duplicates(&self) -> Vec<String> {
        self.reader.duplicates().to_vec()
    }

    fn hierarchy_folder(&self, keys: &[String]) -> String {
        // `zip -r data.zip data.zarr` puts every name under `data.zarr/`. A folder is imported
        // as given: a folder holding only `arr/...` is a hierarchy with an implicit root.
        super::plan::find_root(keys).unwrap_or_default()
    }
}

/// The keys under `prefix` of any store, relative to it.
pub(crate) struct StoreSource {
    pub store: Arc<dyn Store>,
    pub prefix: String,
}

impl Source for StoreSource {
    fn describe(&self) -> String {
        format!("{} store at \"/{}\"", self.store.kind(), self.prefix)
    }

    fn list(&self) -> Result<Vec<Listed>, Error> {
        let mut out = Vec::new();
        for (key, size) in self.store.list_prefix_sized(&self.prefix)? {
            let Some(relative) = key.strip_prefix(&self.prefix) else { continue };
            if !relative.starts_with(crate::key::RESERVED_PREFIX) {
                out.push(Listed { key: relative.to_owned(), size });
            }
        }
        Ok(out)
    }

    /// One [`ReadableStore::get_many`](crate::store::ReadableStore::get_many) per thread, each
    /// over its share of the keys: a local store reads on every core, object storage also keeps
    /// many requests in flight on each.
    fn read_many(&self, keys: &[&str]) -> Result<Vec<Vec<u8>>, Error> {
        let share = super::run::share(keys.len());
        let full: Vec<String> = keys.iter().map(|key| format!("{}{key}", self.prefix)).collect();
        let full: Vec<&str> = full.iter().map(String::as_str).collect();
        let parts = full.par_chunks(share).map(|part| self.store.get_many(part)).collect::<Result<Vec<_>, _>>()?;
        parts
            .into_iter()
            .flatten()
            .zip(keys)
            .map(|(value, key)| {
                value.ok_or_else(|| {
                    TransferError::SourceVanished { source_path: self.describe(), key: (*key).to_owned() }.into()
                })
            })
            .collect()
    }

    fn read(&self, key: &str) -> Result<Vec<u8>, Error> {
        let full = format!("{}{key}", self.prefix);
        self.store
            .get(&full)?
            .ok_or_else(|| TransferError::SourceVanished { source_path: self.describe(), key: key.to_owned() }.into())
    }
}
