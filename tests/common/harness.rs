//! What the interop harnesses share: the Python interpreter that has zarr-python and
//! tensorstore, running a command with its output kept for failure messages, and comparing
//! bytes. Shared by `tests/common/mod.rs` and `tests/common/transfer.rs`.
//!
//! Python comes from `ZARRDB_PYTHON` or `.venv` (`scripts/test.sh` sets both up). Without it the
//! tests fail rather than skip, so a missing environment can never pass for a green run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The Python interpreter that has zarr and tensorstore installed.
pub fn python() -> PathBuf {
    let hint = "the interop tests need the Python environment that scripts/test.sh creates: \
                run `scripts/test.sh` (or set ZARRDB_PYTHON to a python with the packages of \
                tests/interop/requirements.txt)";
    if let Some(p) = std::env::var_os("ZARRDB_PYTHON") {
        let p = PathBuf::from(p);
        assert!(p.exists(), "ZARRDB_PYTHON={} does not exist; {hint}", p.display());
        return p;
    }
    let venv = Path::new(REPO).join(".venv/bin/python");
    assert!(venv.exists(), "no ZARRDB_PYTHON and no {}; {hint}", venv.display());
    venv
}

/// Run a command to completion; `Err` carries a description with its stderr, for panic messages.
pub fn run(cmd: &mut Command) -> Result<Output, String> {
    let out = cmd.output().map_err(|e| format!("could not start {cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!(
            "{cmd:?} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// First byte where two contents differ, for readable failure messages.
pub fn compare(got: &[u8], want: &[u8]) -> Result<(), String> {
    if got == want {
        return Ok(());
    }
    let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
    let show =
        |b: &[u8]| b[at.min(b.len())..(at + 8).min(b.len())].iter().map(|x| format!("{x:02x}")).collect::<String>();
    Err(format!(
        "{} bytes, expected {}; first difference at byte {at}: got {} want {}",
        got.len(),
        want.len(),
        show(got),
        show(want)
    ))
}
