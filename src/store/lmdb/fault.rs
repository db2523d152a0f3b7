//! Reads past the end of `data.mdb` become errors instead of a SIGBUS that kills the process.
//!
//! LMDB maps the whole map size (1 TiB of address space) over `data.mdb` and trusts every offset
//! it finds inside a page. In a damaged file a node offset or a key size can point past the end
//! of the file while still inside the mapping, and touching such an address raises SIGBUS. The
//! check at open (`check_length`) covers what the meta page claims; offsets inside pages are
//! followed by LMDB itself, out of zarrdb's reach.
//!
//! So each environment registers its mapping here (found in `/proc/self/maps`), and a SIGBUS
//! handler, installed once per process, looks the faulting address up. Inside a registered
//! mapping it maps a page of zeros over the faulting page, counts the fault and returns: the read
//! goes on and sees zeros. Every LMDB call is followed by [`Mapping::check`], which turns a
//! counted fault into `StoreError::Damaged`, now and for every later call, since the mapping no
//! longer shows the file where the zeros went. Any other SIGBUS goes to the handler that was
//! there before (Rust's own, for stack overflows, or the default action).
//!
//! Without `/proc` (not Linux) or with more than `SLOTS` environments open, an environment is not
//! covered, and a damaged file can still raise the signal there.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

use crate::error::StoreError;

/// How many environments can be covered at once.
const SLOTS: usize = 64;

/// One covered mapping. `start == 0` is a free slot.
struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    faults: AtomicUsize,
}

#[expect(clippy::declare_interior_mutable_const, reason = "only the array initialiser uses it")]
const FREE: Slot = Slot { start: AtomicUsize::new(0), end: AtomicUsize::new(0), faults: AtomicUsize::new(0) };
static TABLE: [Slot; SLOTS] = [FREE; SLOTS];
static INSTALL: Once = Once::new();
/// The SIGBUS disposition before ours, for signals that are not ours.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// An environment's mapping, covered while this lives.
pub(super) struct Mapping {
    slot: Option<usize>,
}

impl Mapping {
    /// Cover the mapping of `data` (the environment's `data.mdb`, already opened by LMDB).
    pub fn register(data: &Path) -> Mapping {
        install();
        let Some((start, end)) = find(data) else { return Mapping { slot: None } };
        for (i, slot) in TABLE.iter().enumerate() {
            if slot.start.compare_exchange(0, start, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                slot.faults.store(0, Ordering::Release);
                slot.end.store(end, Ordering::Release);
                return Mapping { slot: Some(i) };
            }
        }
        Mapping { slot: None }
    }

    /// Follow a remap (the map grew and LMDB mapped the file again, possibly elsewhere).
    pub fn refresh(&self, data: &Path) {
        let Some(i) = self.slot else { return };
        if let Some((start, end)) = find(data) {
            let slot = &TABLE[i];
            slot.end.store(0, Ordering::Release);
            slot.start.store(start, Ordering::Release);
            slot.end.store(end, Ordering::Release);
        }
    }

    /// Whether a read through this mapping went past the end of the file.
    pub fn faulted(&self) -> bool {
        self.slot.is_some_and(|i| TABLE[i].faults.load(Ordering::Acquire) > 0)
    }

    /// Whether `value` (a slice LMDB returned) lies within the first `limit` bytes of the
    /// mapping, the pages in use. Taken on trust when the mapping is not covered.
    pub fn holds(&self, value: &[u8], limit: usize) -> bool {
        let Some(i) = self.slot else { return true };
        let start = TABLE[i].start.load(Ordering::Acquire);
        let at = value.as_ptr() as usize;
        at >= start && (at - start).checked_add(value.len()).is_some_and(|end| end <= limit)
    }

    /// `Damaged` when any read through this mapping went past the end of the file.
    pub fn check(&self, backend: &'static str, operation: &'static str, key: &str) -> Result<(), StoreError> {
        if self.faulted() {
            return Err(StoreError::Damaged {
                backend,
                operation,
                key: key.to_owned(),
                what: "a page offset points past the end of data.mdb",
            });
        }
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            TABLE[i].end.store(0, Ordering::Release);
            TABLE[i].start.store(0, Ordering::Release);
        }
    }
}

/// The address range of the mapping of `data` in this process, from `/proc/self/maps`.
fn find(data: &Path) -> Option<(usize, usize)> {
    use std::os::unix::fs::MetadataExt;
    let inode = std::fs::metadata(data).ok()?.ino();
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    // `start-end perms offset dev inode path`; LMDB maps the file once, from offset 0.
    maps.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let (range, _perms, offset, _dev, ino) =
            (fields.next()?, fields.next()?, fields.next()?, fields.next()?, fields.next()?);
        if ino.parse::<u64>().ok()? != inode || u64::from_str_radix(offset, 16).ok()? != 0 {
            return None;
        }
        let (start, end) = range.split_once('-')?;
        Some((usize::from_str_radix(start, 16).ok()?, usize::from_str_radix(end, 16).ok()?))
    })
}

fn install() {
    INSTALL.call_once(|| {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if let Ok(page) = usize::try_from(page) {
            if page.is_power_of_two() {
                PAGE.store(page, Ordering::Release);
            }
        }
        // SAFETY: an all-zero sigaction is a valid value to be filled in by the kernel.
        let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: reading the current disposition; both pointers are valid for the call.
        if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) } != 0 {
            return;
        }
        let _ = PREVIOUS.set(previous);
        // SAFETY: as above, all-zero is valid; the fields that matter are set below.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = on_sigbus as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        // SAFETY: `action` is fully initialised and `on_sigbus` only makes async-signal-safe
        // calls (mmap, sigaction) and atomic operations.
        unsafe {
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    });
}

extern "C" fn on_sigbus(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for a handler installed with SA_SIGINFO.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Acquire);
    for slot in &TABLE {
        let start = slot.start.load(Ordering::Acquire);
        if start != 0 && start <= addr && addr < slot.end.load(Ordering::Acquire) {
            let at = (addr & !(page - 1)) as *mut libc::c_void;
            // SAFETY: the page lies inside a mapping LMDB made of data.mdb, past the end of the
            // file (only such pages fault): no Rust object lives there, and LMDB unmaps the
            // whole range, this page included, when the environment closes.
            let mapped = unsafe {
                libc::mmap(at, page, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED, -1, 0)
            };
            if mapped != libc::MAP_FAILED {
                slot.faults.fetch_add(1, Ordering::AcqRel);
                return;
            }
        }
    }
    let Some(previous) = PREVIOUS.get() else { return };
    let handler = previous.sa_sigaction;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // SAFETY: restoring a disposition the kernel gave us; returning re-runs the faulting
        // instruction, which then meets the default action, as without this handler.
        unsafe { libc::sigaction(signal, previous, std::ptr::null_mut()) };
    } else if previous.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: a handler installed with SA_SIGINFO has this signature.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(handler) };
        f(signal, info, context);
    } else {
        // SAFETY: a handler installed without SA_SIGINFO takes the signal number only.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
        f(signal);
    }
}
