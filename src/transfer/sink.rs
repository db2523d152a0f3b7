//! Where a transfer writes to: a database (one bulk transaction), a new folder, a new zip
//! archive, or any store. A sink takes a window of values at a time; `finish` makes the result
//! appear at once, and dropping an unfinished sink leaves nothing behind (a database transaction
//! aborts, a half-written folder or archive is removed). A plain store has no transaction: what
//! was written before a failure stays.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::error::{io_error, TransferError};
use super::run::share;
use crate::db::BulkWrite;
use crate::error::Error;
use crate::key::untrusted as key;
use crate::store::zip::ZipWriter;
use crate::store::Store;

/// A destination for a transfer.
pub(crate) trait Sink {
    /// Write a window of (key, value) pairs; keys are final store keys.
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), Error>;

    /// Make everything written visible; dropping instead leaves nothing (except for plain stores).
    fn finish(self: Box<Self>) -> Result<(), Error>;
}

/// A database: one bulk write, committed at `finish`.
pub(crate) struct DbSink(pub BulkWrite);

impl Sink for DbSink {
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), Error> {
        self.0.put(values)
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        self.0.commit()
    }
}

/// A temporary name beside `destination`, renamed into place by `finish`; unique within the
/// process (a counter) and across processes (the pid), so two exports never share one. A
/// sink removes only the staging name it created itself.
fn staging_path(destination: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut name = destination.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".zarrdb-partial-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
    destination.with_file_name(name)
}

/// Refuse an existing destination: export never overwrites or merges. Checked before an export
/// does any work, and again, atomically, when the result is renamed into place (`publish`).
pub(crate) fn check_absent(destination: &Path) -> Result<(), TransferError> {
    match fs::symlink_metadata(destination) {
        Ok(_) => Err(TransferError::DestinationExists { path: destination.display().to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error("inspect", destination)(e)),
    }
}

/// Move the finished staging file or folder to `destination`, which must still not exist: on
/// Linux atomically (`RENAME_NOREPLACE`), elsewhere checked just before. Everything written is
/// synced first (`sync_contents`; a zip writer syncs its own file), and the parent folder after,
/// so that after a power loss the destination is either absent or complete.
fn publish(staging: &Path, destination: &Path, sync_contents: bool) -> Result<(), Error> {
    // Errors name the destination, not the staging name the user never chose.
    let shown = |e: TransferError| match e {
        TransferError::Io { operation, source, .. } => {
            TransferError::Io { operation, path: destination.display().to_string(), source }
        }
        other => other,
    };
    if sync_contents {
        sync_file_system(staging).map_err(shown)?;
    }
    rename_no_replace(staging, destination).map_err(shown)?;
    let parent = match destination.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::File::open(parent).and_then(|d| d.sync_all()).map_err(io_error("sync", parent))?;
    Ok(())
}

/// Flush every file written under `path` to disk. On Linux one `syncfs` does it for the whole
/// file system (one call instead of one fsync per chunk file); elsewhere each file is synced.
fn sync_file_system(path: &Path) -> Result<(), TransferError> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let handle = fs::File::open(path).map_err(io_error("open", path))?;
        // SAFETY: the descriptor is open for the duration of the call.
        if unsafe { libc::syncfs(handle.as_raw_fd()) } != 0 {
            return Err(io_error("sync", path)(std::io::Error::last_os_error()));
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        fn walk(path: &Path) -> Result<(), TransferError> {
            if path.is_dir() {
                for entry in fs::read_dir(path).map_err(io_error("list", path))? {
                    walk(&entry.map_err(io_error("list", path))?.path())?;
                }
            }
            fs::File::open(path).and_then(|f| f.sync_all()).map_err(io_error("sync", path))
        }
        walk(path)
    }
}

/// Rename `from` to `to`, refusing an existing `to`: atomically on Linux (`RENAME_NOREPLACE`).
#[cfg(target_os = "linux")]
fn rename_no_replace(from: &Path, to: &Path) -> Result<(), TransferError> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io_error("rename", p)(std::io::ErrorKind::InvalidInput.into()))
    };
    let (src, dst) = (c(from)?, c(to)?);
    // SAFETY: both paths are NUL-terminated strings that live across the call.
    let r =
        unsafe { libc::renameat2(libc::AT_FDCWD, src.as_ptr(), libc::AT_FDCWD, dst.as_ptr(), libc::RENAME_NOREPLACE) };
    if r == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    Err(match e.raw_os_error() {
        Some(libc::EEXIST) => TransferError::DestinationExists { path: to.display().to_string() },
        _ => io_error("rename", from)(e),
    })
}

/// Rename `from` to `to`, refusing an existing `to`: checked just before, elsewhere.
#[cfg(not(target_os = "linux"))]
fn rename_no_replace(from: &Path, to: &Path) -> Result<(), TransferError> {
    check_absent(to)?;
    fs::rename(from, to).map_err(io_error("rename", from))
}

/// A new folder in the File System Store layout, written under a staging name and renamed.
pub(crate) struct DirSink {
    staging: PathBuf,
    destination: PathBuf,
    finished: bool,
}

impl DirSink {
    pub(crate) fn create(destination: &Path) -> Result<DirSink, Error> {
        let staging = staging_path(destination);
        // Errors name the destination: the staging name is this sink's business.
        fs::create_dir(&staging).map_err(io_error("create", destination))?;
        Ok(DirSink { staging, destination: destination.to_path_buf(), finished: false })
    }

    /// Where `path`, inside the staging folder, will be once the folder is renamed.
    fn shown(&self, path: &Path) -> PathBuf {
        path.strip_prefix(&self.staging).map_or_else(|_| path.to_path_buf(), |rest| self.destination.join(rest))
    }
}

impl Sink for DirSink {
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), Error> {
        let described = format!("folder \"{}\"", self.destination.display());
        values.into_par_iter().try_for_each(|(k, v)| {
            // Keys come from a database that validated them; checked again because a file
            // outside the destination must be impossible, not merely unlikely.
            key::check(&described, &k)?;
            #[cfg(windows)]
            key::check_windows_file_name(&described, &k)?;
            let path = self.staging.join(&k);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(io_error("create", &self.shown(parent)))?;
            }
            // A name that already exists means two keys map to one file (a file system that
            // folds case or normalises Unicode): an error, never a silent overwrite.
            let shown = self.shown(&path);
            let mut file =
                fs::OpenOptions::new().write(true).create_new(true).open(&path).map_err(io_error("create", &shown))?;
            std::io::Write::write_all(&mut file, &v).map_err(io_error("write", &shown))?;
            Ok(())
        })
    }

    fn finish(mut self: Box<Self>) -> Result<(), Error> {
        publish(&self.staging, &self.destination, true)?;
        self.finished = true;
        Ok(())
    }
}

impl Drop for DirSink {
    fn drop(&mut self) {
        if !self.finished {
            let _ = fs::remove_dir_all(&self.staging);
        }
    }
}

/// A new zip archive (stored entries), written under a staging name and renamed.
pub(crate) struct ZipSink {
    writer: Option<ZipWriter>,
    staging: PathBuf,
    destination: PathBuf,
    finished: bool,
}

impl ZipSink {
    pub(crate) fn create(destination: &Path) -> Result<ZipSink, Error> {
        let staging = staging_path(destination);
        // Creates the file (refusing an existing one), so the staging name is this sink's own.
        let writer = ZipWriter::create(&staging, destination).map_err(TransferError::from)?;
        Ok(ZipSink { writer: Some(writer), staging, destination: destination.to_path_buf(), finished: false })
    }
}

impl Sink for ZipSink {
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), Error> {
        let writer = self.writer.as_mut().expect("the writer lives until finish");
        for (k, v) in values {
            writer.add(&k, &v).map_err(TransferError::from)?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), Error> {
        let writer = self.writer.take().expect("the writer lives until finish");
        // The writer syncs the archive itself.
        writer.finish().map_err(TransferError::from)?;
        publish(&self.staging, &self.destination, false)?;
        self.finished = true;
        Ok(())
    }
}

impl Drop for ZipSink {
    fn drop(&mut self) {
        if !self.finished {
            let _ = fs::remove_file(&self.staging);
        }
    }
}

/// Any store, written key by key.
pub(crate) struct StoreSink<'a>(pub &'a dyn Store);

impl Sink for StoreSink<'_> {
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), Error> {
        // One set_many per thread, each over its share (as `StoreSource::read_many` reads).
        let share = share(values.len());
        let mut parts = Vec::new();
        let mut values = values.into_iter().peekable();
        while values.peek().is_some() {
            parts.push(values.by_ref().take(share).collect::<Vec<_>>());
        }
        parts.into_par_iter().try_for_each(|part| Ok(self.0.set_many(part)?))
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        Ok(())
    }
}
