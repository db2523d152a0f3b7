//! Where the commit log's bytes live (`mod.rs`): a file beside the database, or, in the fault
//! injection tests, a simulated disk that loses what was not synced when it "crashes".

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
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

/// The file grows by this much at a time, written with zeros.
pub(super) const GROWTH: u64 = 256 << 10;

/// Write zeros into `file` from `from` up to the next multiple of [`GROWTH`] at or past `end`, so
/// that a record written below it overwrites bytes already there (no sync then changes the
/// file's length). Returns how far the file is written now.
pub(super) fn grow_with_zeros(file: &dyn LogFile, from: u64, end: u64) -> io::Result<u64> {
    let grown = end.div_ceil(GROWTH) * GROWTH;
    let zeros = vec![0u8; GROWTH as usize];
    let mut at = from;
    while at < grown {
        let n = (grown - at).min(GROWTH) as usize;
        file.write_at(&zeros[..n], at)?;
        at += n as u64;
    }
    Ok(grown.max(from))
}

/// The log's storage: a file named by a path (created at its first record, see `identity.rs`),
/// or given (tests).
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

    /// The simulated disk of a given place.
    pub(super) fn given(&self) -> Option<Arc<dyn LogFile>> {
        match self {
            Place::Path(_) => None,
            Place::Given(file) => Some(file.clone()),
        }
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
