//! Paths that are neither a regular file nor a folder: a FIFO, a socket, a device.
//!
//! Opening a FIFO for reading waits until some process opens it for writing (and for writing,
//! until a reader appears), so a database path, a zip archive or a file zarrdb keeps beside a
//! database that turned out to be one would hang the command for ever. Such paths are refused at
//! once instead: [`what`] names them from their metadata, and [`open_regular`] opens files
//! non-blocking and checks what it opened, so a FIFO put in a file's place between a look at the
//! path and its open is refused too, never waited on.

use std::fs::{File, FileType, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What a path of this type is, for a message, when it is neither a regular file, a folder nor a
/// symbolic link (whose target decides).
pub(crate) fn what(file_type: FileType) -> Option<&'static str> {
    if file_type.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if file_type.is_socket() {
        Some("a socket")
    } else if file_type.is_char_device() {
        Some("a character device")
    } else if file_type.is_block_device() {
        Some("a block device")
    } else {
        None
    }
}

/// Open `path` with `options` (read, write, create: as the caller set them), without blocking
/// on a FIFO, and refuse anything but a regular file with an `InvalidInput` error saying what it
/// is. With `nofollow`, a symbolic link at `path` is refused too (`ELOOP`): for files zarrdb
/// keeps beside a database, which it never makes links.
///
/// The descriptor stays non-blocking, which regular files ignore.
pub(crate) fn open_regular(path: &Path, options: &mut OpenOptions, nofollow: bool) -> io::Result<File> {
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
    if nofollow {
        flags |= libc::O_NOFOLLOW;
    }
    let file = options.custom_flags(flags).open(path)?;
    let file_type = file.metadata()?.file_type();
    if file_type.is_file() {
        return Ok(file);
    }
    let found = what(file_type).unwrap_or(if file_type.is_dir() { "a folder" } else { "not a regular file" });
    Err(io::Error::new(io::ErrorKind::InvalidInput, format!("it is {found}, not a regular file")))
}

/// [`open_regular`] for reading, following links.
pub(crate) fn open_regular_to_read(path: &Path) -> io::Result<File> {
    open_regular(path, OpenOptions::new().read(true), false)
}
