//! Files zarrdb keeps beside a database (a commit log, a checkpoint, a compaction's copy): they
//! belong to the database by identity, never by name alone.
//!
//! A name beside a database may hold anything a user put there: another database, a symbolic
//! link to a file elsewhere, a FIFO. So such a file is created exclusively (`O_CREAT | O_EXCL`,
//! which also refuses a link at the name) and never through a link; an existing one is read only
//! when it is a regular file reached without a link ([`open_regular`]); and one is removed only
//! while its name still names the very file zarrdb holds open ([`remove_held`]).

use std::fs::{File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A name for a new file beside `path`, unique to this process and call: `.NAME.WHAT.PID.N`.
pub(crate) fn unique_beside(path: &Path, what: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.{what}.{}.{n}", std::process::id()))
}

/// Remove the files [`unique_beside`] named for `path` and `what` that a process killed before it
/// renamed or removed them left behind. A name alone proves nothing, so each one must also be a
/// regular file reached without a link, owned by this process's user, of a process that no longer
/// runs, and either empty or one that `owned` recognises by its content as this database's (a log
/// header naming the database, an engine's magic number). Best effort: one that cannot be removed
/// stays; without /proc (where whether a process runs is read) nothing is removed.
pub(crate) fn remove_abandoned(path: &Path, what: &str, owned: impl Fn(&File) -> bool) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else { return };
    let folder = if folder.as_os_str().is_empty() { Path::new(".") } else { folder };
    let prefix = format!(".{}.{what}.", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(rest) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else { continue };
        let mut parts = rest.split('.');
        let (Some(pid), Some(n), None) = (parts.next(), parts.next(), parts.next()) else { continue };
        let (Ok(pid), Ok(_)) = (pid.parse::<u32>(), n.parse::<u64>()) else { continue };
        if process_ended(pid) {
            remove_if_owned(&entry.path(), &owned);
        }
    }
}

/// Whether process `pid`, which is not this one, has ended, as /proc tells; `false` without
/// /proc, so that nothing is removed on its word.
pub(crate) fn process_ended(pid: u32) -> bool {
    pid != std::process::id() && Path::new("/proc/self").exists() && !Path::new(&format!("/proc/{pid}")).exists()
}

/// Remove the file at `path` when it is a regular file reached without a link, owned by this
/// process's user, and empty or recognised by `owned`; anything else is left alone.
pub(crate) fn remove_if_owned(path: &Path, owned: impl Fn(&File) -> bool) {
    let Ok(Some(file)) = open_regular(path, false) else { return };
    let Ok(meta) = file.metadata() else { return };
    if meta.uid() == euid() && (meta.len() == 0 || owned(&file)) {
        let _ = remove_held(path, &file);
    }
}

/// This process's effective user: the owner files of zarrdb's own are made with.
pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether `file` starts with `magic`.
pub(crate) fn starts_with(file: &File, magic: &[u8]) -> bool {
    use std::os::unix::fs::FileExt;
    let mut bytes = vec![0u8; magic.len()];
    file.read_exact_at(&mut bytes, 0).is_ok() && bytes == magic
}

/// Create a new file at `path` with permission bits `mode` (less the umask): fails when anything
/// is there, a link included, so nothing else is ever opened, truncated or written.
pub(crate) fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// The file at `path` when it is a regular file reached without a link, opened for reading (and
/// `writable`); `None` when nothing is there or something else is (a link, a FIFO, a folder,
/// a device), which is left alone. Neither a FIFO nor a device is ever opened.
pub(crate) fn open_regular(path: &Path, writable: bool) -> io::Result<Option<File>> {
    let before = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !before.file_type().is_file() {
        return Ok(None);
    }
    let opened = OpenOptions::new()
        .read(true)
        .write(writable)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        // Replaced meanwhile by a link (ELOOP), or removed.
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    // Replaced between the look and the open: whatever is there now is not what was looked at.
    if !meta.file_type().is_file() || (meta.dev(), meta.ino()) != (before.dev(), before.ino()) {
        return Ok(None);
    }
    Ok(Some(file))
}

/// Whether `path` names `file` itself (not a link to it, not another file put in its place).
pub(crate) fn names(path: &Path, file: &File) -> bool {
    match (std::fs::symlink_metadata(path), file.metadata()) {
        (Ok(at), Ok(held)) => (at.dev(), at.ino()) == (held.dev(), held.ino()),
        _ => false,
    }
}

/// Remove `path` if it still names `file`; a name that now holds anything else is left alone.
pub(crate) fn remove_held(path: &Path, file: &File) -> io::Result<()> {
    if names(path, file) {
        std::fs::remove_file(path)?;
    }
    Ok(())
}

/// Give `file` the owner, group and permission bits of the file at `model` (a copy about to
/// replace it by a rename, or a file beside it), or fail: a copy that cannot have them must not
/// replace the file. `bits` masks the permission bits taken (a log takes no execute bits).
pub(crate) fn take_owner_and_mode(file: &File, model: &Path, bits: u32) -> io::Result<()> {
    let want = std::fs::metadata(model)?;
    let now = file.metadata()?;
    // Before the mode: a change of owner clears the set-user-ID and set-group-ID bits.
    if (now.uid(), now.gid()) != (want.uid(), want.gid()) {
        std::os::unix::fs::fchown(file, Some(want.uid()), Some(want.gid()))?;
    }
    file.set_permissions(Permissions::from_mode(want.mode() & bits))
}

/// Put the file at `temp` (created by this process) at `path`, never replacing anything there:
/// `AlreadyExists` when the name is taken.
pub(crate) fn place_new(temp: &Path, path: &Path) -> io::Result<()> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    match renameat_with(CWD, temp, CWD, path, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::EXIST) => Err(io::ErrorKind::AlreadyExists.into()),
        // A file system without the flag: a hard link fails as well when the name is taken.
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS | rustix::io::Errno::NOTSUP) => {
            std::fs::hard_link(temp, path)?;
            std::fs::remove_file(temp)
        }
        Err(e) => Err(e.into()),
    }
}

/// Make the names in the folder of `path` durable.
pub(crate) fn sync_folder(path: &Path) -> io::Result<()> {
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(folder) => File::open(folder)?.sync_all(),
        None => File::open(".")?.sync_all(),
    }
}
