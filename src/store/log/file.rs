//! Where the commit log's bytes live (`mod.rs`): a file beside the database, or, in the fault
//! injection tests, a simulated disk that loses what was not synced when it "crashes".

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The operations the log needs of its storage.
pub(crate) trait LogFile: Send + Sync {
    fn len(&self) -> io::Result<u64>;
    /// Fill `out` from `offset`; a read past the end is an error.
    fn read_at(&self, out: &mut [u8], offset: u64) -> io::Result<()>;
    fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()>;
    fn sync(&self) -> io::Result<()>;
    /// Start writing `len` bytes at `offset` to the disk now; the sync that follows waits.
    fn start_writeback(&self, _offset: u64, _len: usize) {}
}

/// The log's storage: named by a path, opened at its first record, or given (tests).
#[derive(Clone)]
pub(crate) enum Place {
    Path(PathBuf),
    #[cfg_attr(not(test), expect(dead_code, reason = "the fault injection tests give a simulated disk"))]
    Given(Arc<dyn LogFile>),
}

impl Place {
    /// What errors name.
    pub(super) fn describe(&self) -> String {
        match self {
            Place::Path(path) => path.display().to_string(),
            Place::Given(_) => "(simulated commit log)".to_owned(),
        }
    }

    /// The log's storage to read, `None` where there is none.
    pub(crate) fn open_existing(&self) -> io::Result<Option<Arc<dyn LogFile>>> {
        match self {
            Place::Path(path) => match File::open(path) {
                Ok(file) => Ok(Some(Arc::new(file))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
            },
            Place::Given(file) => Ok(Some(file.clone())),
        }
    }

    /// The log's storage to write, created if needed.
    pub(super) fn open_for_writing(&self) -> io::Result<Arc<dyn LogFile>> {
        match self {
            Place::Path(path) => {
                let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
                // The file's name must survive a crash as its records do.
                sync_folder(path)?;
                Ok(Arc::new(file))
            }
            Place::Given(file) => Ok(file.clone()),
        }
    }

    /// Remove the log (a given one stays: its records are all held by the database).
    pub(super) fn remove(&self) {
        if let Place::Path(path) = self {
            if path.exists() {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

fn sync_folder(path: &Path) -> io::Result<()> {
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(folder) => File::open(folder)?.sync_all(),
        None => File::open(".")?.sync_all(),
    }
}

impl LogFile for File {
    fn len(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    fn read_at(&self, out: &mut [u8], offset: u64) -> io::Result<()> {
        self.read_exact_at(out, offset)
    }

    fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        self.write_all_at(data, offset)
    }

    fn sync(&self) -> io::Result<()> {
        self.sync_data()
    }

    #[cfg(target_os = "linux")]
    fn start_writeback(&self, offset: u64, len: usize) {
        use std::os::fd::AsRawFd;
        let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else { return };
        // SAFETY: `sync_file_range` reads no memory of this process; the descriptor is open for
        // as long as `self` is borrowed. A failure only means the sync that follows does all the
        // work.
        let started = unsafe { libc::sync_file_range(self.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE) };
        let _ = started;
    }
}
