//! Telling a full disk from other I/O failures when a commit fails.
//!
//! A user whose disk filled up needs to hear that, not "Input/output error": redb reports the
//! operating system's `ENOSPC`, but LMDB writes its pages with one `pwritev` and turns the short
//! write a full disk causes into `EIO`. So a failed commit is called a full disk when its error
//! carries `ENOSPC`, or when it is an I/O failure and the file system now has less room than the
//! commit needed (its bytes plus [`SLACK`] for the engine's pages and headers).

use std::path::Path;

use crate::error::{Error, StoreError};

/// Room beyond the values' bytes that a commit may need: the engine's page headers, B-tree
/// branches, and allocation in whole pages (redb rounds a large value up to a power of two).
const SLACK: u64 = 1 << 20;

/// `error` as [`StoreError::DiskFull`] when it came from a full disk, else unchanged. `bytes` is
/// what the failed commit wrote (keys and values).
pub(super) fn classify(error: Error, path: &Path, bytes: u64) -> Error {
    let Error::Store(StoreError::Engine { backend, operation, key, source }) = error else { return error };
    let available = || available_bytes(path);
    let full = match io_kind(source.as_ref()) {
        Some(Failure::NoSpace) => true,
        Some(Failure::Other) => available().is_some_and(|free| free < bytes.saturating_add(SLACK)),
        None => false,
    };
    if !full {
        return StoreError::Engine { backend, operation, key, source }.into();
    }
    let path = path.display().to_string();
    StoreError::DiskFull { backend, operation, path, available: available().unwrap_or(0), source }.into()
}

enum Failure {
    /// `ENOSPC` (or `EDQUOT`, a full quota) somewhere in the error.
    NoSpace,
    /// Another I/O error.
    Other,
}

/// The I/O failure behind an engine's error, if it is one. The engines wrap `io::Error` in their
/// own types, some without a `source`, so the message is read too: `os error N` is how Rust
/// prints an operating system error.
fn io_kind(error: &(dyn std::error::Error + 'static)) -> Option<Failure> {
    let no_space = [libc::ENOSPC, libc::EDQUOT];
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    let mut io = false;
    while let Some(e) = current {
        if let Some(io_error) = e.downcast_ref::<std::io::Error>() {
            if io_error.raw_os_error().is_some_and(|code| no_space.contains(&code))
                || io_error.kind() == std::io::ErrorKind::StorageFull
            {
                return Some(Failure::NoSpace);
            }
            io = true;
        }
        current = e.source();
    }
    let message = error.to_string();
    if no_space.iter().any(|code| message.contains(&format!("(os error {code})"))) {
        return Some(Failure::NoSpace);
    }
    (io || message.contains("(os error ")).then_some(Failure::Other)
}

/// The bytes free for an unprivileged writer on the file system holding `path`.
fn available_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c_path` is a NUL-terminated string that outlives the call, and `stat` points to
    // writable memory of the size `statvfs` fills.
    if unsafe { libc::statvfs(c_path.as_ptr(), stat.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: `statvfs` returned 0, so it initialised `stat`.
    let stat = unsafe { stat.assume_init() };
    #[allow(clippy::useless_conversion, reason = "the field types differ between platforms")]
    let (blocks, size) = (u64::from(stat.f_bavail), u64::from(stat.f_frsize));
    Some(blocks.saturating_mul(size))
}
