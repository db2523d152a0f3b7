//! Interoperability with the two reference Zarr v3 implementations, zarr-python and tensorstore.
//!
//! `tests/interop/write_fixtures.py` makes both libraries write the same set of arrays (every core
//! data type, both byte orders, every chunk key encoding, edge chunks, 0-d arrays, unwritten chunks,
//! NaN payload and other odd fill values) and records each array's full content as little-endian
//! bytes. The tests check both directions against those bytes:
//! - zarrdb reads what the libraries wrote (through the `zarrdb cat --raw` CLI, so the binary's
//!   store and path handling is covered too);
//! - the libraries read what zarrdb wrote (`tests/interop/read_check.py`), and zarrdb stores the
//!   same chunk keys they do (so fill-only chunks are not stored and keys are encoded alike).
//!
//! Python comes from `ZARRDB_PYTHON` or `.venv`; `scripts/test.sh` sets both up. Without it the
//! tests fail rather than skip, so a missing environment can never pass for a green run.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{cat_reads_fixtures, python_reads_zarrdb_copies, Suite};

const SUITE: Suite = Suite {
    script: "write_fixtures.py",
    what: "arrays",
    // Only the bytes codec here: the array's path says what it is.
    describe: |_| String::from("bytes"),
    check_copy: |_: &Path, _: &Path, _: &BTreeSet<String>| Ok(()),
};

#[test]
fn cat_reads_python_written_arrays() {
    cat_reads_fixtures(&SUITE);
}

#[test]
fn python_reads_zarrdb_written_arrays() {
    python_reads_zarrdb_copies(&SUITE);
}
