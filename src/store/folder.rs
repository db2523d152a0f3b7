//! A folder of the local file system, reached below its root without following links.
//!
//! Every name below the root is opened with `openat(O_NOFOLLOW)` from a descriptor of the folder
//! above it, so a folder that is swapped for a link at any moment is refused, never followed:
//! there is no window between checking a path and using it. The one link allowed is a key's own
//! file linking to a regular file inside the root; its target is opened the same way, name by name
//! from the root. The directory store and the import's folder reader both read through here, so
//! they keep one policy.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::ops::ControlFlow;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// How often a write starts again when the folder it writes into was removed under it (by an
/// erase of the folder's last file, see [`Folder::write_file`]).
const REMOVED_FOLDER_ATTEMPTS: u32 = 64;
/// The longest pause between two such attempts. Writers and erasers of one folder that run in
/// step (threads time-sliced on a loaded machine) can remove it under each other again and
/// again; pauses that grow with each attempt break the step.
const REMOVED_FOLDER_PAUSE: std::time::Duration = std::time::Duration::from_millis(5);

/// Why an operation in a [`Folder`] failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FolderError {
    /// The file system refused an operation.
    #[error("cannot {operation} \"{path}\": {source}")]
    Io {
        operation: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A symbolic link that the folder's policy does not follow.
    #[error("\"{path}\" is a symbolic link {reason}")]
    Link { path: PathBuf, reason: &'static str },
}

/// What a folder entry is, links not followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EntryKind {
    File,
    Folder,
    Link,
    /// Sockets, FIFOs and devices: they hold no Zarr data.
    Other,
}

/// One entry of a listed folder.
pub(crate) struct Entry {
    pub name: OsString,
    pub kind: EntryKind,
}

/// An open folder below the root, and its path relative to the root ("" for the root).
pub(crate) struct Dir {
    fd: OwnedFd,
    rel: String,
}

impl Dir {
    /// The folder's path relative to the root.
    pub fn rel(&self) -> &str {
        &self.rel
    }

    fn child(&self, name: &str) -> String {
        if self.rel.is_empty() {
            name.to_owned()
        } else {
            format!("{}/{name}", self.rel)
        }
    }
}

/// A root folder and the policy for everything below it.
#[derive(Debug)]
pub(crate) struct Folder {
    root: PathBuf,
    /// The root with every link resolved: where a linked file's target must lie.
    canonical: PathBuf,
    fd: OwnedFd,
}

/// Folders on the way are opened as paths only: passing through needs search permission, not read.
const DIR_FLAGS: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);
/// A folder opened to list it.
const LIST_FLAGS: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);
// Non-blocking, so a FIFO in a file's place cannot hang the open; it is then no regular file.
const FILE_FLAGS: OFlags =
    OFlags::RDONLY.union(OFlags::NOFOLLOW).union(OFlags::NONBLOCK).union(OFlags::NOCTTY).union(OFlags::CLOEXEC);

/// The deepest folder below the root that is walked, as the import's key check allows: deeper
/// keys are refused, deeper folders are not listed, so no walk recurses without bound.
pub(crate) const MAX_DEPTH: usize = 256;

/// Links followed from a key's file to a regular file, at most.
const MAX_LINK_HOPS: usize = 8;

/// Temporary names tried before a write gives up (each taken name is a leftover of a crash).
const TEMP_ATTEMPTS: usize = 64;

/// Splits `rel` into its folder and its last name.
fn split(rel: &str) -> (&str, &str) {
    rel.rsplit_once('/').unwrap_or(("", rel))
}

fn is_missing(e: Errno) -> bool {
    e == Errno::NOENT || e == Errno::NOTDIR
}

impl Folder {
    /// Opens `root`, which is followed if it is itself a link: the caller chose it.
    pub fn open(root: &Path) -> io::Result<Folder> {
        let fd = rustix::fs::open(root, DIR_FLAGS.difference(OFlags::NOFOLLOW), Mode::empty())?;
        let canonical = root.canonicalize()?;
        Ok(Folder { root: root.to_path_buf(), canonical, fd })
    }

    /// The root as given.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The path of `rel` below the root, for messages.
    pub fn path(&self, rel: &str) -> PathBuf {
        if rel.is_empty() {
            self.root.clone()
        } else {
            self.root.join(rel)
        }
    }

    fn io(&self, operation: &'static str, rel: &str) -> impl FnOnce(Errno) -> FolderError + '_ {
        let path = self.path(rel);
        move |e| FolderError::Io { operation, path, source: e.into() }
    }

    fn check_name<'n>(&self, rel: &str, name: &'n str) -> Result<&'n str, FolderError> {
        if name.is_empty() || name == "." || name == ".." {
            let source = io::Error::new(io::ErrorKind::InvalidInput, "an empty, \".\" or \"..\" name");
            return Err(FolderError::Io { operation: "resolve", path: self.path(rel), source });
        }
        Ok(name)
    }

    /// The folder at `rel`, each folder on the way a real one; `None` if one is missing or a file.
    pub fn dir(&self, rel: &str) -> Result<Option<Dir>, FolderError> {
        self.walk(rel, false)
    }

    /// The folder at `rel`, created with its parents where missing.
    pub fn dir_create(&self, rel: &str) -> Result<Dir, FolderError> {
        match self.walk(rel, true)? {
            Some(dir) => Ok(dir),
            None => Err(self.io("create the folder", rel)(Errno::NOTDIR)),
        }
    }

    fn walk(&self, rel: &str, create: bool) -> Result<Option<Dir>, FolderError> {
        if rel.split('/').count() > MAX_DEPTH {
            let source = io::Error::new(io::ErrorKind::InvalidInput, "deeper than 256 folders");
            return Err(FolderError::Io { operation: "resolve", path: self.path(rel), source });
        }
        let fd = self.fd.try_clone().map_err(|source| FolderError::Io {
            operation: "open",
            path: self.root.clone(),
            source,
        })?;
        let mut dir = Dir { fd, rel: String::new() };
        if rel.is_empty() {
            return Ok(Some(dir));
        }
        for name in rel.split('/') {
            match self.subdir(&dir, name, create)? {
                Some(next) => dir = next,
                None => return Ok(None),
            }
        }
        Ok(Some(dir))
    }

    /// The folder `name` inside `dir`; `None` if missing or not a folder; a link is refused.
    pub fn subdir(&self, dir: &Dir, name: &str, create: bool) -> Result<Option<Dir>, FolderError> {
        let rel = dir.child(self.check_name(&dir.rel, name)?);
        loop {
            match rustix::fs::openat(&dir.fd, name, DIR_FLAGS, Mode::empty()) {
                Ok(fd) => return Ok(Some(Dir { fd, rel })),
                Err(e) if e == Errno::NOENT && create => {
                    match rustix::fs::mkdirat(&dir.fd, name, Mode::from_bits_truncate(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => continue,
                        Err(e) => return Err(self.io("create the folder", &rel)(e)),
                    }
                }
                Err(Errno::NOENT) => return Ok(None),
                Err(e) if e == Errno::NOTDIR || e == Errno::LOOP => {
                    return match rustix::fs::statat(&dir.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                            Err(FolderError::Link { path: self.path(&rel), reason: "to a folder on the key's path" })
                        }
                        // A file where a folder would be: nothing is below it.
                        _ => Ok(None),
                    };
                }
                Err(e) => return Err(self.io("open the folder", &rel)(e)),
            }
        }
    }

    /// Every entry of `dir`, links not followed.
    pub fn entries(&self, dir: &Dir) -> Result<Vec<Entry>, FolderError> {
        let mut out = Vec::new();
        self.each_entry(dir, &mut |entry| {
            out.push(entry);
            Ok(ControlFlow::Continue(()))
        })?;
        Ok(out)
    }

    /// Calls `f` with each entry of `dir` as it is read, until `f` breaks.
    fn each_entry(
        &self,
        dir: &Dir,
        f: &mut dyn FnMut(Entry) -> Result<ControlFlow<()>, FolderError>,
    ) -> Result<(), FolderError> {
        let fail = |e| self.io("list", &dir.rel)(e);
        let listed = rustix::fs::openat(&dir.fd, ".", LIST_FLAGS, Mode::empty()).map_err(fail)?;
        for entry in rustix::fs::Dir::new(listed).map_err(fail)? {
            let entry = entry.map_err(fail)?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let name = OsStr::from_bytes(name).to_os_string();
            let file_type = match entry.file_type() {
                // Some file systems leave the type out of the listing.
                FileType::Unknown => match rustix::fs::statat(&dir.fd, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => FileType::from_raw_mode(st.st_mode),
                    Err(Errno::NOENT) => continue,
                    Err(e) => return Err(fail(e)),
                },
                known => known,
            };
            let kind = match file_type {
                FileType::RegularFile => EntryKind::File,
                FileType::Directory => EntryKind::Folder,
                FileType::Symlink => EntryKind::Link,
                _ => EntryKind::Other,
            };
            if f(Entry { name, kind })?.is_break() {
                break;
            }
        }
        Ok(())
    }

    /// The regular file at `rel` open for reading, or `None` if there is none (missing, a folder,
    /// a FIFO). A link is followed only to a regular file inside the root.
    pub fn open_file(&self, rel: &str) -> Result<Option<File>, FolderError> {
        let (dir_rel, name) = split(rel);
        let Some(dir) = self.dir(dir_rel)? else { return Ok(None) };
        self.open_in(&dir, self.check_name(rel, name)?)
    }

    /// The regular file `name` inside `dir`, as [`Folder::open_file`].
    pub fn open_in(&self, dir: &Dir, name: &str) -> Result<Option<File>, FolderError> {
        let rel = dir.child(name);
        match rustix::fs::openat(&dir.fd, name, FILE_FLAGS, Mode::empty()) {
            Ok(fd) => regular(File::from(fd), || self.path(&rel)),
            Err(Errno::LOOP) => self.linked(&rel).map(Some),
            Err(e) if is_missing(e) => Ok(None),
            Err(e) => Err(self.io("open", &rel)(e)),
        }
    }

    /// The length of the regular file at `rel`, as [`Folder::open_file`] finds it, without
    /// opening it (a file without read permission has a length too).
    pub fn file_len(&self, rel: &str) -> Result<Option<u64>, FolderError> {
        let (dir_rel, name) = split(rel);
        let name = self.check_name(rel, name)?;
        let Some(dir) = self.dir(dir_rel)? else { return Ok(None) };
        match rustix::fs::statat(&dir.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                FileType::RegularFile => Ok(Some(st.st_size as u64)),
                FileType::Symlink => {
                    let file = self.linked(rel)?;
                    let meta = file.metadata().map_err(|source| FolderError::Io {
                        operation: "inspect",
                        path: self.path(rel),
                        source,
                    })?;
                    Ok(Some(meta.len()))
                }
                _ => Ok(None),
            },
            Err(e) if is_missing(e) => Ok(None),
            Err(e) => Err(self.io("inspect", rel)(e)),
        }
    }

    /// The target of the link at `rel`, when it is a regular file inside the root.
    fn linked(&self, rel: &str) -> Result<File, FolderError> {
        self.linked_within(rel, MAX_LINK_HOPS)
    }

    /// [`Folder::linked`], following at most `hops` links. The link's text is resolved by name
    /// inside the root, never by the file system outside it: a target outside is refused without
    /// being looked at, so a refusal tells nothing about what exists there.
    fn linked_within(&self, rel: &str, hops: usize) -> Result<File, FolderError> {
        let path = self.path(rel);
        let refuse = |reason| FolderError::Link { path: path.clone(), reason };
        if hops == 0 {
            return Err(refuse("in a chain of more than 8 links"));
        }
        let changed = "whose target changed while it was opened";
        let (dir_rel, name) = split(rel);
        let Some(dir) = self.dir(dir_rel)? else { return Err(refuse(changed)) };
        let text = match rustix::fs::readlinkat(&dir.fd, name, Vec::new()) {
            Ok(text) => text,
            // No longer a link (EINVAL) or gone.
            Err(e) if e == Errno::INVAL || is_missing(e) => return Err(refuse(changed)),
            Err(e) => return Err(self.io("read the link", rel)(e)),
        };
        let Some(inside) = self.resolve_inside(dir_rel, Path::new(OsStr::from_bytes(text.as_bytes()))) else {
            return Err(refuse("pointing outside the folder"));
        };
        let (target_dir, target_name) = split(&inside);
        let target_dir = match self.dir(target_dir) {
            Ok(Some(target_dir)) => target_dir,
            Ok(None) => return Err(refuse("whose target does not exist")),
            Err(FolderError::Link { .. }) => return Err(refuse("through a linked folder")),
            Err(e) => return Err(e),
        };
        match rustix::fs::openat(&target_dir.fd, target_name, FILE_FLAGS, Mode::empty()) {
            Ok(fd) => match regular(File::from(fd), || self.path(&inside))? {
                Some(file) => Ok(file),
                None => Err(refuse("to something other than a file")),
            },
            Err(Errno::LOOP) => self.linked_within(&inside, hops - 1),
            Err(e) if is_missing(e) => Err(refuse("whose target does not exist")),
            Err(e) => Err(self.io("open", &inside)(e)),
        }
    }

    /// The path below the root that a link in the folder `dir_rel` names with `target`, resolved
    /// by name (`..` climbs to the folder above, as it does where no folder is a link); `None`
    /// if it leaves the root, is the root itself or is no UTF-8 path.
    fn resolve_inside(&self, dir_rel: &str, target: &Path) -> Option<String> {
        use std::path::Component;
        if target.is_absolute() {
            let normal = normalize(target)?;
            let below = [self.canonical.as_path(), self.root.as_path()]
                .into_iter()
                .filter(|root| root.is_absolute())
                .find_map(|root| normal.strip_prefix(normalize(root)?).ok().map(Path::to_path_buf))?;
            return below.to_str().filter(|s| !s.is_empty()).map(str::to_owned);
        }
        let mut names: Vec<&str> = Vec::new();
        names.extend(dir_rel.split('/').filter(|name| !name.is_empty()));
        for component in target.components() {
            match component {
                Component::CurDir => {}
                Component::ParentDir => {
                    names.pop()?;
                }
                Component::Normal(name) => names.push(name.to_str()?),
                Component::RootDir | Component::Prefix(_) => return None,
            }
        }
        (!names.is_empty()).then(|| names.join("/"))
    }

    /// Writes `value` to `rel` through a temporary file named by `temp` in the same folder,
    /// renamed into place: a reader sees the old or the new value. A link at `rel` is replaced,
    /// never written through. A temporary name already taken (left by a crashed process with the
    /// same process id) is passed over for the next one `temp` gives.
    ///
    /// Erasing the last file of a folder removes the folder (`remove_empty_folders`), so another
    /// thread or process may remove a folder between the moment this write opens it and the
    /// moment it creates its file there, which then fails as not found: the write starts again,
    /// creating the folder anew, up to [`REMOVED_FOLDER_ATTEMPTS`] times, after a pause that grows
    /// with each attempt (at most [`REMOVED_FOLDER_PAUSE`]).
    pub fn write_file(&self, rel: &str, value: &[u8], temp: &dyn Fn() -> String) -> Result<(), FolderError> {
        let mut attempt = 1;
        loop {
            match self.write_file_once(rel, value, temp) {
                Err(FolderError::Io { source, .. })
                    if source.kind() == io::ErrorKind::NotFound && attempt < REMOVED_FOLDER_ATTEMPTS =>
                {
                    if attempt < 4 {
                        std::thread::yield_now();
                    } else {
                        let pause = std::time::Duration::from_micros(50 * u64::from(attempt));
                        std::thread::sleep(pause.min(REMOVED_FOLDER_PAUSE));
                    }
                    attempt += 1;
                }
                done => return done,
            }
        }
    }

    fn write_file_once(&self, rel: &str, value: &[u8], temp: &dyn Fn() -> String) -> Result<(), FolderError> {
        let (dir_rel, name) = split(rel);
        let name = self.check_name(rel, name)?;
        let dir = self.dir_create(dir_rel)?;
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut attempts = 0;
        let (temp, fd) = loop {
            let temp = temp();
            match rustix::fs::openat(&dir.fd, temp.as_str(), flags, Mode::from_bits_truncate(0o666)) {
                Ok(fd) => break (temp, fd),
                Err(Errno::EXIST) if attempts + 1 < TEMP_ATTEMPTS => attempts += 1,
                Err(e) => return Err(self.io("create", &dir.child(&temp))(e)),
            }
        };
        let written = File::from(fd)
            .write_all(value)
            .map_err(|source| FolderError::Io { operation: "write", path: self.path(&dir.child(&temp)), source })
            .and_then(|()| {
                rustix::fs::renameat(&dir.fd, temp.as_str(), &dir.fd, name).map_err(self.io("replace", rel))
            });
        if written.is_err() {
            let _ = rustix::fs::unlinkat(&dir.fd, temp.as_str(), AtFlags::empty());
        }
        written
    }

    /// Removes the file (or link) at `rel`; `false` if there was none. A folder is left alone.
    pub fn remove_file(&self, rel: &str) -> Result<bool, FolderError> {
        let (dir_rel, name) = split(rel);
        let name = self.check_name(rel, name)?;
        let Some(dir) = self.dir(dir_rel)? else { return Ok(false) };
        match rustix::fs::unlinkat(&dir.fd, name, AtFlags::empty()) {
            Ok(()) => Ok(true),
            Err(e) if is_missing(e) || e == Errno::ISDIR => Ok(false),
            Err(e) => Err(self.io("remove", rel)(e)),
        }
    }

    /// Removes the folder at `rel` with everything in it; `false` if there was none. A link there
    /// is removed, not followed; a file there is no folder and stays.
    pub fn remove_tree(&self, rel: &str) -> Result<bool, FolderError> {
        let (dir_rel, name) = split(rel);
        let name = self.check_name(rel, name)?;
        let Some(dir) = self.dir(dir_rel)? else { return Ok(false) };
        match rustix::fs::statat(&dir.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => {
                    self.remove_tree_in(&dir, OsStr::new(name), rel.split('/').count()).map(|()| true)
                }
                FileType::Symlink => self.remove_entry(&dir, OsStr::new(name), false).map(|()| true),
                _ => Ok(false),
            },
            Err(e) if is_missing(e) => Ok(false),
            Err(e) => Err(self.io("inspect", rel)(e)),
        }
    }

    /// Removes the entry `name` of `dir`: a folder (`folder`) or anything else; gone already is fine.
    fn remove_entry(&self, dir: &Dir, name: &OsStr, folder: bool) -> Result<(), FolderError> {
        let flags = if folder { AtFlags::REMOVEDIR } else { AtFlags::empty() };
        match rustix::fs::unlinkat(&dir.fd, name, flags) {
            Ok(()) => Ok(()),
            Err(e) if is_missing(e) => Ok(()),
            Err(e) => {
                Err(FolderError::Io { operation: "remove", path: self.path(&dir.rel).join(name), source: e.into() })
            }
        }
    }

    /// Removes the folder `name` of `dir`, `depth` folders below the root, and everything in it.
    fn remove_tree_in(&self, dir: &Dir, name: &OsStr, depth: usize) -> Result<(), FolderError> {
        let path = || self.path(&dir.rel).join(name);
        if depth > MAX_DEPTH {
            let source = io::Error::new(io::ErrorKind::InvalidInput, "deeper than 256 folders");
            return Err(FolderError::Io { operation: "remove", path: path(), source });
        }
        let inner = match rustix::fs::openat(&dir.fd, name, DIR_FLAGS, Mode::empty()) {
            Ok(fd) => Dir { fd, rel: format!("{}/{}", dir.rel, name.to_string_lossy()) },
            Err(Errno::NOENT) => return Ok(()),
            // Replaced by a link or a file since it was listed: removed itself, never followed.
            Err(e) if e == Errno::NOTDIR || e == Errno::LOOP => return self.remove_entry(dir, name, false),
            Err(e) => return Err(FolderError::Io { operation: "open the folder", path: path(), source: e.into() }),
        };
        for entry in self.entries(&inner)? {
            if entry.kind == EntryKind::Folder {
                self.remove_tree_in(&inner, &entry.name, depth + 1)?;
            } else {
                self.remove_entry(&inner, &entry.name, false)?;
            }
        }
        self.remove_entry(dir, name, true)
    }

    /// Removes the folder at `rel` and then each folder above it, up to (not including) the root,
    /// as long as they are empty.
    pub fn remove_empty_folders(&self, mut rel: &str) {
        while !rel.is_empty() {
            let (parent, name) = split(rel);
            let Ok(Some(dir)) = self.dir(parent) else { return };
            // Fails (harmlessly) when the folder is not empty, or is a link or gone.
            if rustix::fs::unlinkat(&dir.fd, name, AtFlags::REMOVEDIR).is_err() {
                return;
            }
            rel = parent;
        }
    }

    /// Whether `dir` holds a regular file somewhere below it (at most [`MAX_DEPTH`] folders
    /// down), not counting names `skip` accepts; stops at the first one found, reading no more of
    /// each folder than it must.
    pub fn holds_a_file(&self, dir: &Dir, skip: &dyn Fn(&OsStr) -> bool) -> Result<bool, FolderError> {
        let depth = if dir.rel.is_empty() { 0 } else { dir.rel.split('/').count() };
        if depth > MAX_DEPTH {
            return Ok(false);
        }
        let mut found = false;
        self.each_entry(dir, &mut |entry| {
            if skip(&entry.name) {
                return Ok(ControlFlow::Continue(()));
            }
            found = match entry.kind {
                EntryKind::File => true,
                EntryKind::Folder => match entry.name.to_str() {
                    Some(name) => match self.subdir(dir, name, false)? {
                        Some(inner) => self.holds_a_file(&inner, skip)?,
                        None => false,
                    },
                    None => false,
                },
                EntryKind::Link | EntryKind::Other => false,
            };
            Ok(if found { ControlFlow::Break(()) } else { ControlFlow::Continue(()) })
        })?;
        Ok(found)
    }
}

/// `path` (absolute) with `.` and `..` resolved by name; `None` if `..` climbs above `/`.
fn normalize(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// `file` if it is a regular file, else `None`.
fn regular(file: File, path: impl FnOnce() -> PathBuf) -> Result<Option<File>, FolderError> {
    let meta = file.metadata().map_err(|source| FolderError::Io { operation: "inspect", path: path(), source })?;
    Ok(meta.is_file().then_some(file))
}

impl AsFd for Dir {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
