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

/// Three tests, `on_redb`, `on_lmdb` and `on_a_directory`, each running
/// `$scenario(locator: &str, dir: &Path)` on a new store of that kind in a temporary folder `dir`.
#[allow(unused_macros)]
macro_rules! on_every_backend {
    ($scenario:ident) => {
        #[test]
        fn on_redb() {
            let dir = tempfile::tempdir().unwrap();
            $scenario(dir.path().join("data.zarrdb").to_str().unwrap(), dir.path());
        }

        #[test]
        fn on_lmdb() {
            let dir = tempfile::tempdir().unwrap();
            $scenario(&format!("lmdb:{}", dir.path().join("env").display()), dir.path());
        }

        #[test]
        fn on_a_directory() {
            let dir = tempfile::tempdir().unwrap();
            $scenario(&format!("dir:{}", dir.path().join("tree.zarr").display()), dir.path());
        }
    };
}
