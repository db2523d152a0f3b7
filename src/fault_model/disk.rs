//! A simulated disk for redb and its commit log: every write is kept in memory, an I/O error can
//! be injected at any call, and a crash keeps what was synced plus any subset of the writes
//! since, some of them torn. The database's file and its log are two files of one disk
//! (`Disk::sibling_with_image`): they fail together, and crash each with its own losses.
//!
//! A real disk makes no promise about unsynced writes: they may all land, none, some, in any
//! order, a sector at a time. So the image after a crash is the synced image with each later
//! write applied whole, not at all, or cut after a random number of 512-byte sectors.

use std::io;
use std::sync::Arc;

use parking_lot::Mutex;
use redb::StorageBackend;

use crate::store::LogFile;

/// The unit a torn write is cut at.
const SECTOR: usize = 512;

/// One change since the last sync.
#[derive(Debug, Clone)]
enum Pending {
    Write(u64, Vec<u8>),
    SetLen(u64),
}

#[derive(Debug, Default)]
struct State {
    /// What reads see.
    current: Vec<u8>,
    /// What the last sync made durable.
    durable: Vec<u8>,
    /// Changes since the last sync, in order.
    pending: Vec<Pending>,
}

/// The planned failure, shared by the files of one disk.
#[derive(Debug, Default)]
struct Fault {
    /// Calls left before the injected failure (`None`: no failure planned).
    fail_in: Option<u64>,
    /// The failure happened: the "process" lost its disk, every later call fails.
    failed: bool,
}

/// One file of the simulated disk; clones share it.
#[derive(Debug, Clone, Default)]
pub(super) struct Disk {
    state: Arc<Mutex<State>>,
    fault: Arc<Mutex<Fault>>,
}

impl Disk {
    /// A disk that holds `image` as its durable contents.
    pub fn with_image(image: Vec<u8>) -> Disk {
        let state = State { current: image.clone(), durable: image, ..State::default() };
        Disk { state: Arc::new(Mutex::new(state)), fault: Arc::default() }
    }

    /// Another file of the same disk, holding `image`: it fails when this one does.
    pub fn sibling_with_image(&self, image: Vec<u8>) -> Disk {
        Disk { fault: self.fault.clone(), ..Disk::with_image(image) }
    }

    /// Fail the `calls`-th call from now to any file of the disk, and every call after it.
    pub fn fail_after(&self, calls: u64) {
        self.fault.lock().fail_in = Some(calls);
    }

    /// Whether the planned failure happened.
    pub fn failed(&self) -> bool {
        self.fault.lock().failed
    }

    /// Count a call toward the planned failure.
    fn call(&self) -> io::Result<()> {
        self.fault.lock().call()
    }

    /// The image a crash now leaves: the durable one plus a random part of what came after,
    /// chosen by `pick(n)` (a number below `n`).
    pub fn crash_image(&self, mut pick: impl FnMut(u64) -> u64) -> Vec<u8> {
        let state = self.state.lock();
        let mut image = state.durable.clone();
        for change in &state.pending {
            match change {
                Pending::SetLen(len) => {
                    if pick(2) == 0 {
                        image.resize(*len as usize, 0);
                    }
                }
                Pending::Write(offset, data) => {
                    let kept = match pick(4) {
                        0 | 1 => data.len(),
                        2 => 0,
                        _ => (pick(data.len().div_ceil(SECTOR).max(1) as u64) as usize * SECTOR).min(data.len()),
                    };
                    if kept > 0 {
                        put(&mut image, *offset, &data[..kept]);
                    }
                }
            }
        }
        image
    }

    /// The image a clean close leaves: everything written.
    pub fn image(&self) -> Vec<u8> {
        self.state.lock().current.clone()
    }
}

/// Write `data` into `image` at `offset`, extending it with zeros as needed.
fn put(image: &mut Vec<u8>, offset: u64, data: &[u8]) {
    let at = offset as usize;
    if image.len() < at + data.len() {
        image.resize(at + data.len(), 0);
    }
    image[at..at + data.len()].copy_from_slice(data);
}

impl Fault {
    /// Count a call toward the planned failure.
    fn call(&mut self) -> io::Result<()> {
        if self.failed {
            return Err(io::Error::other("the simulated disk is gone (an earlier call failed)"));
        }
        match self.fail_in {
            Some(0) => {
                self.failed = true;
                Err(io::Error::other("injected I/O error"))
            }
            Some(n) => {
                self.fail_in = Some(n - 1);
                Ok(())
            }
            None => Ok(()),
        }
    }
}

impl LogFile for Disk {
    fn len(&self) -> io::Result<u64> {
        StorageBackend::len(self)
    }

    fn read_at(&self, out: &mut [u8], offset: u64) -> io::Result<()> {
        StorageBackend::read(self, offset, out)
    }

    fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        StorageBackend::write(self, offset, data)
    }

    fn sync(&self) -> io::Result<()> {
        StorageBackend::sync_data(self)
    }
}

impl StorageBackend for Disk {
    fn len(&self) -> io::Result<u64> {
        self.call()?;
        Ok(self.state.lock().current.len() as u64)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.call()?;
        let state = self.state.lock();
        let start = offset as usize;
        let Some(bytes) = state.current.get(start..start + out.len()) else {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end"));
        };
        out.copy_from_slice(bytes);
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.call()?;
        let mut state = self.state.lock();
        state.current.resize(len as usize, 0);
        state.pending.push(Pending::SetLen(len));
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        self.call()?;
        let mut state = self.state.lock();
        let pending = std::mem::take(&mut state.pending);
        for change in pending {
            match change {
                Pending::SetLen(len) => state.durable.resize(len as usize, 0),
                Pending::Write(offset, data) => put(&mut state.durable, offset, &data),
            }
        }
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.call()?;
        let mut state = self.state.lock();
        put(&mut state.current, offset, data);
        state.pending.push(Pending::Write(offset, data.to_vec()));
        Ok(())
    }
}
