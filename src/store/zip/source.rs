//! The archive file, read at explicit offsets so that several threads can read entries at once.

use std::fs::File;
use std::io::{self, Read};

/// An open archive and its length when it was opened.
#[derive(Debug)]
pub(super) struct Source {
    #[cfg(unix)]
    file: File,
    // Without positional reads, a seek and a read must happen under one lock.
    #[cfg(not(unix))]
    file: std::sync::Mutex<File>,
    len: u64,
}

impl Source {
    /// Wraps `file`, recording its current length.
    pub(super) fn new(file: File) -> io::Result<Source> {
        let len = file.metadata()?.len();
        #[cfg(not(unix))]
        let file = std::sync::Mutex::new(file);
        Ok(Source { file, len })
    }

    /// The file's length when it was opened.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// Fills `buf` from `offset`; a file that shrank since opening gives `UnexpectedEof`.
    #[cfg(unix)]
    pub(super) fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset)
    }

    /// Fills `buf` from `offset`; a file that shrank since opening gives `UnexpectedEof`.
    #[cfg(not(unix))]
    pub(super) fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        use std::io::{Seek, SeekFrom};
        // A poisoned lock only means another reader panicked; the file itself is still usable.
        let mut file = self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(buf)
    }

    /// Reads `len` bytes from `offset` into a new vector. The caller has checked that the range
    /// lies inside the file, which bounds the allocation.
    pub(super) fn read_vec(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut buf = vec![0; len];
        self.read_exact_at(&mut buf, offset)?;
        Ok(buf)
    }
}

/// A `Read` over `[pos, end)` of a [`Source`]. An I/O error sets `failed` as well as being
/// returned, so that a caller reading through a decoder can tell a failing disk from corrupt data.
pub(super) struct Range<'a> {
    pub(super) source: &'a Source,
    pub(super) pos: u64,
    pub(super) end: u64,
    pub(super) failed: bool,
}

impl Read for Range<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.end.saturating_sub(self.pos);
        let n = usize::try_from(left).map_or(buf.len(), |left| left.min(buf.len()));
        let Some(buf) = buf.get_mut(..n) else { return Ok(0) };
        if let Err(e) = self.source.read_exact_at(buf, self.pos) {
            self.failed = true;
            return Err(e);
        }
        // n <= end - pos, so this cannot overflow.
        self.pos += n as u64;
        Ok(n)
    }
}
