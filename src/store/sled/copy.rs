//! Read-only opens of sled: sled has no read-only mode, and its open rewrites the tail of its log
//! and needs write access to the folder. A read-only handle therefore opens a private copy of the
//! folder in the temporary directory, taken under a shared lock on sled's data file (a writer in
//! another process holds it exclusively, so the copy is never taken mid-write), and removes the
//! copy when it closes. The original is only read: it stays byte-identical, and read-only media
//! and files without write permission work. The price is a copy of the whole database per open.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use fs2::FileExt;

use super::NAME;
use crate::error::OpenError;

/// A copy of a sled folder, removed on drop.
pub(super) struct Copy {
    pub(super) path: PathBuf,
}

impl Copy {
    /// Copy the sled folder at `path` into a new temporary folder.
    pub(super) fn of(path: &Path) -> Result<Copy, OpenError> {
        let display = path.display().to_string();
        let io = |source| OpenError::Io { path: display.clone(), source };
        let data = File::open(path.join("db")).map_err(io)?;
        if FileExt::try_lock_shared(&data).is_err() {
            return Err(OpenError::Locked { path: display, backend: NAME });
        }
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!("zarrdb-sled-read-only-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let copy = Copy { path: std::env::temp_dir().join(name) };
        let copied = copy_folder(path, &copy.path).map_err(io);
        let _ = FileExt::unlock(&data);
        copied.map(|()| copy)
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Copy the regular files and folders under `from` to the new folder `to`; links are not
/// followed (sled makes none, and one could lead out of the database).
fn copy_folder(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_folder(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
            // The copy keeps the original's mode, which may be read-only; sled opens it to write.
            std::fs::set_permissions(&target, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        }
    }
    Ok(())
}
