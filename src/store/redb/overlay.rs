//! A redb storage backend that never writes its file: for read-only opens.
//!
//! redb cannot read a file without being able to write it: an open may recover or repair it, an
//! integrity check commits, and closing writes. Read-only commands (`tree`, `info`, `cat`, `check`,
//! `export`) must leave the file byte-identical and work on read-only media, so they open it
//! through this backend: the file is opened read-only and every write redb makes goes to pages
//! held in memory, read back over the file's. Memory grows only with what redb writes (header,
//! allocator state, a repair), not with the file.
//!
//! Locks: the file's own backend takes them, but a read-only file descriptor can hold only
//! shared locks, so exclusive requests are taken shared. That keeps the meaning that matters: a
//! writer in another process conflicts with this handle, and readers do not.

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::ops::Bound;

use parking_lot::Mutex;
use redb::backends::FileBackend;
use redb::{BackendError, StorageBackend};

/// Bytes per overlay page; redb writes whole pages of at least this size, aligned.
const PAGE: u64 = 4096;

#[derive(Debug)]
pub(super) struct ReadOnlyOverlay {
    file: FileBackend,
    state: Mutex<Overlay>,
}

#[derive(Debug)]
struct Overlay {
    /// The length redb believes the storage has.
    len: u64,
    /// The file's length at open: bytes past it (after a `set_len`) read as zeros.
    file_len: u64,
    /// Pages redb wrote, by page index.
    pages: BTreeMap<u64, Box<[u8]>>,
}

impl ReadOnlyOverlay {
    pub(super) fn new(file: File) -> io::Result<ReadOnlyOverlay> {
        let file = FileBackend::new(file).map_err(io::Error::other)?;
        let len = file.len()?;
        Ok(ReadOnlyOverlay { file, state: Mutex::new(Overlay { len, file_len: len, pages: BTreeMap::new() }) })
    }
}

impl Overlay {
    /// The current contents of page `index`, from the overlay or the file.
    fn page(&self, file: &FileBackend, index: u64) -> io::Result<Box<[u8]>> {
        if let Some(page) = self.pages.get(&index) {
            return Ok(page.clone());
        }
        let mut page = vec![0u8; PAGE as usize].into_boxed_slice();
        let start = index * PAGE;
        if start < self.file_len {
            let end = (start + PAGE).min(self.file_len);
            file.read(start, &mut page[..(end - start) as usize])?;
        }
        Ok(page)
    }
}

impl StorageBackend for ReadOnlyOverlay {
    fn len(&self) -> Result<u64, io::Error> {
        Ok(self.state.lock().len)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), io::Error> {
        let state = self.state.lock();
        let end = offset.checked_add(out.len() as u64).filter(|&end| end <= state.len);
        let Some(end) = end else {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end of the storage"));
        };
        // Runs of pages the overlay does not hold are read from the file in one call.
        let mut pos = offset;
        while pos < end {
            let index = pos / PAGE;
            let page_end = ((index + 1) * PAGE).min(end);
            let dst = &mut out[(pos - offset) as usize..(page_end - offset) as usize];
            match state.pages.get(&index) {
                Some(page) => {
                    dst.copy_from_slice(&page[(pos - index * PAGE) as usize..(page_end - index * PAGE) as usize])
                }
                None => {
                    let file_end = page_end.min(state.file_len);
                    if pos < file_end {
                        self.file.read(pos, &mut dst[..(file_end - pos) as usize])?;
                    }
                    dst[(file_end.max(pos) - pos) as usize..].fill(0);
                }
            }
            pos = page_end;
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> Result<(), io::Error> {
        let mut state = self.state.lock();
        if len < state.len {
            // Bytes past the new end must read as zeros if the storage grows again.
            let first_gone = len / PAGE;
            if len % PAGE != 0 {
                let mut page = state.page(&self.file, first_gone)?;
                page[(len % PAGE) as usize..].fill(0);
                state.pages.insert(first_gone, page);
            }
            let from = first_gone + u64::from(len % PAGE != 0);
            state.pages.retain(|&index, _| index < from);
            state.file_len = state.file_len.min(len);
        }
        state.len = len;
        Ok(())
    }

    fn sync_data(&self) -> Result<(), io::Error> {
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), io::Error> {
        let mut state = self.state.lock();
        let end = offset
            .checked_add(data.len() as u64)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "write past the largest offset"))?;
        let mut pos = offset;
        while pos < end {
            let index = pos / PAGE;
            let page_end = ((index + 1) * PAGE).min(end);
            let mut page = state.page(&self.file, index)?;
            let src = &data[(pos - offset) as usize..(page_end - offset) as usize];
            page[(pos - index * PAGE) as usize..(page_end - index * PAGE) as usize].copy_from_slice(src);
            state.pages.insert(index, page);
            pos = page_end;
        }
        state.len = state.len.max(end);
        Ok(())
    }

    fn close(&self) -> Result<(), io::Error> {
        self.file.close()
    }

    fn try_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.file.try_lock_shared_range(start, end)
    }

    fn try_lock_shared_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.file.try_lock_shared_range(start, end)
    }

    fn lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.file.lock_shared_range(start, end)
    }

    fn lock_shared_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.file.lock_shared_range(start, end)
    }

    fn unlock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.file.unlock_range(start, end)
    }

    fn query_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.file.query_lock_range(start, end)
    }
}
