//! Standard output of the commands. A reader that closes the pipe early (`zarrdb cat big | head
//! -c 10`) ends the command quietly with status 0: Rust ignores SIGPIPE, so the write fails with
//! `BrokenPipe`, which `println!` would turn into a panic.

use std::fmt::Arguments;
use std::io::{self, Write};

use super::{CliError, CliResult};

/// Write `args` to standard output (see [`outln!`] and [`out!`]).
pub(crate) fn write(args: Arguments) -> CliResult {
    io::stdout().lock().write_fmt(args).map_err(failed)
}

/// The error of a failed write to standard output: quiet when its reader went away.
pub(crate) fn failed(err: io::Error) -> CliError {
    if err.kind() == io::ErrorKind::BrokenPipe {
        CliError::closed_output()
    } else {
        CliError::new(format!("writing to standard output failed: {err}"))
    }
}
