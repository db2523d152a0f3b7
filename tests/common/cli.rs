//! Running the `zarrdb` binary from the command-line tests.

use std::process::{Command, Output};

/// Run `zarrdb` with `args`, whatever its outcome.
pub fn zarrdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args).output().expect("run zarrdb")
}

/// Run `zarrdb` with `args`, which must succeed; its stdout.
pub fn ok(args: &[&str]) -> Vec<u8> {
    let out = zarrdb(args);
    assert!(out.status.success(), "zarrdb {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// [`ok`] as text.
pub fn ok_text(args: &[&str]) -> String {
    String::from_utf8(ok(args)).expect("UTF-8 output")
}
