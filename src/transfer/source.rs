//! Where a transfer reads from: a folder, a zip archive, or any store (a database snapshot when
//! exporting). A source lists its keys with their sizes once, then hands out values by key, from
//! several threads at once.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::error::{io_error, TransferError};
use super::key;
use super::zip::{ZipEntry, ZipLimits, ZipReader};
use crate::error::Error;
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

#[cfg(unix)]
fn file_id(meta: &fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_id(meta: &fs::Metadata) -> FileId {
    // No inode numbers here: the size stands in (the copy loop compares it too).
    (0, meta.len())
}

/// Open a folder or a zip file.
pub(crate) fn open_path(path: &Path) -> Result<Box<dyn Source + Send>, Error> {
    let meta = fs::metadata(path).map_err(|_| TransferError::SourceNotFound { path: path.display().to_string() })?;
    if meta.is_dir() {
        let canonical = path.canonicalize().map_err(io_error("resolve", path))?;
        Ok(Box::new(DirSource { root: path.to_path_buf(), canonical, files: OnceLock::new() }))
    } else if meta.is_file() {
        Ok(Box::new(ZipSource::open(path)?))
    } else {
        Err(TransferError::SourceNotFound { path: path.display().to_string() }.into())
    }
}

/// A folder in the File System Store layout (each key a file; `/` separates folders).
struct DirSource {
    root: PathBuf,
    /// The root with every link resolved, to tell links that stay inside from links that leave.
    canonical: PathBuf,
    /// The file (device, inode) each key named when listed, after links were checked. A read
    /// must open that same file: if a folder on the way was swapped for a link meanwhile, the
    /// read would land elsewhere, and is refused.
    files: OnceLock<HashMap<String, (FileId, u64)>>,
}

/// Device and inode number.
type FileId = (u64, u64);

/// The largest file read from a folder, as for zip entries (`ZipLimits::max_entry_size`).
const MAX_FILE_SIZE: u64 = 4 << 30;

impl DirSource {
    fn walk(&self, dir: &Path, prefix: &str, out: &mut Vec<(Listed, FileId)>) -> Result<(), Error> {
        let described = self.describe();
        for entry in fs::read_dir(dir).map_err(io_error("list", dir))? {
            let entry = entry.map_err(io_error("list", dir))?;
            let path = entry.path();
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                return Err(TransferError::UnsafeName {
                    source_path: described,
                    name: entry.file_name().to_string_lossy().into_owned(),
                    reason: "not UTF-8",
                }
                .into());
            };
            let key = format!("{prefix}{name}");
            key::check(&described, &key)?;
            let kind = entry.file_type().map_err(io_error("inspect", &path))?;
            if kind.is_symlink() {
                let meta = self.linked_file(&path)?;
                out.push((self.listed(key, &meta)?, file_id(&meta)));
            } else if kind.is_dir() {
                self.walk(&path, &format!("{key}/"), out)?;
            } else if kind.is_file() {
                let meta = entry.metadata().map_err(io_error("inspect", &path))?;
                out.push((self.listed(key, &meta)?, file_id(&meta)));
            }
            // Sockets, FIFOs and devices hold no Zarr data; they are left out.
        }
        Ok(())
    }

    /// A link to a file inside the folder is read like the file; a link that leaves the folder
    /// (its data could be anything the user can read) or points to a folder (loops, the same
    /// keys twice) is refused.
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

    fn linked_file(&self, link: &Path) -> Result<fs::Metadata, Error> {
        let refuse = |reason| TransferError::Symlink { path: link.display().to_string(), reason };
        let target = link.canonicalize().map_err(|_| refuse("its target does not exist"))?;
        if !target.starts_with(&self.canonical) {
            return Err(refuse("it points outside the folder being imported").into());
        }
        let meta = fs::metadata(&target).map_err(io_error("inspect", &target))?;
        if !meta.is_file() {
            return Err(refuse("it points to a folder, not a file").into());
        }
        Ok(meta)
    }
}

impl Source for DirSource {
    fn describe(&self) -> String {
        format!("folder \"{}\"", self.root.display())
    }

    fn list(&self) -> Result<Vec<Listed>, Error> {
        let mut found = Vec::new();
        self.walk(&self.root, "", &mut found)?;
        found.sort_by(|a, b| a.0.key.cmp(&b.0.key));
        let files = found.iter().map(|(l, id)| (l.key.clone(), (*id, l.size))).collect();
        let _ = self.files.set(files);
        Ok(found.into_iter().map(|(l, _)| l).collect())
    }

    fn read(&self, key: &str) -> Result<Vec<u8>, Error> {
        let path = self.root.join(key);
        let vanished = || TransferError::SourceVanished { source_path: self.describe(), key: key.to_owned() };
        let &(listed, size) = self.files.get().and_then(|f| f.get(key)).ok_or_else(vanished)?;
        // Non-blocking, so a file swapped for a FIFO cannot hang the open; it fails the check below.
        let mut options = fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
        let file = options.open(&path).map_err(io_error("read", &path))?;
        let meta = file.metadata().map_err(io_error("inspect", &path))?;
        if !meta.is_file() || file_id(&meta) != listed {
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
        for key in self.store.list_prefix(&self.prefix)? {
            let Some(relative) = key.strip_prefix(&self.prefix) else { continue };
            if relative.starts_with(crate::db::RESERVED_PREFIX) {
                continue;
            }
            // A key deleted between listing and sizing is simply not copied.
            if let Some(size) = self.store.size(&key)? {
                out.push(Listed { key: relative.to_owned(), size });
            }
        }
        Ok(out)
    }

    fn read(&self, key: &str) -> Result<Vec<u8>, Error> {
        let full = format!("{}{key}", self.prefix);
        self.store
            .get(&full)?
            .ok_or_else(|| TransferError::SourceVanished { source_path: self.describe(), key: key.to_owned() }.into())
    }
}
