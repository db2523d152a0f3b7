//! NumPy `.npy` files in and out of the command line, judged by numpy and zarr-python
//! (`tests/interop/npy_cli.py`): every fixed-size data type NumPy and Zarr share, big-endian and
//! Fortran-order files, region writes, appends from standard input, region reads; on a redb
//! file, an LMDB folder and a directory store.
//!
//! Python comes from `ZARRDB_PYTHON` or `.venv`; without it the tests fail rather than skip.

#[macro_use]
#[path = "common/cli.rs"]
#[expect(dead_code, reason = "numpy judges here; only the backend macro is used")]
mod cli;

#[path = "common/harness.rs"]
#[expect(dead_code, reason = "values are compared by numpy, not byte for byte")]
mod harness;

use std::path::Path;
use std::process::Command;

use harness::{python, run, REPO};

fn through_numpy(store: &str, work: &Path) {
    let script = Path::new(REPO).join("tests/interop/npy_cli.py");
    let mut cmd = Command::new(python());
    cmd.arg(script).arg(env!("CARGO_BIN_EXE_zarrdb")).arg(store).arg(work);
    if let Err(e) = run(&mut cmd) {
        panic!("{e}");
    }
}

on_every_backend!(through_numpy);
