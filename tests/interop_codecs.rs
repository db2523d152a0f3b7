//! Codec interoperability with zarr-python and tensorstore: the codec counterpart of
//! `tests/interop.rs` (which covers data types, fill values and key encodings with `bytes` only).
//!
//! `tests/interop/write_codec_fixtures.py` makes both libraries write arrays with every codec and
//! the combinations that matter (gzip, zstd, blosc with every cname/shuffle, crc32c, transpose with
//! either byte order, sharding with the index at start and end, compressed and transposed inner
//! chains, nested sharding, partial edge shards, all-fill inner chunks, unwritten shards) over the
//! dtypes bool to complex128, and records each array's content as little-endian bytes. Then:
//! - zarrdb reads every array (`zarrdb cat --raw`) and must return exactly those bytes;
//! - zarrdb re-creates every array from its zarr.json and content in a fresh store, must store the
//!   same chunk keys as the library did, and both libraries must read zarrdb's copy identically
//!   (`tests/interop/read_check.py`).
//!
//! Python comes from `ZARRDB_PYTHON` or `.venv` (see `scripts/test.sh`); without it the tests fail.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use serde_json::Value;

use common::{cat_reads_fixtures, python_reads_zarrdb_copies, Suite};

/// The codec names of a fixture's zarr.json, nested sharding chains in brackets, for messages.
fn chain(dir: &Path) -> String {
    fn names(codecs: &Value) -> String {
        let one = |c: &Value| match c["configuration"]["codecs"] {
            Value::Array(_) => {
                format!("{}[{}]", c["name"].as_str().unwrap_or("?"), names(&c["configuration"]["codecs"]))
            }
            _ => c["name"].as_str().or(c.as_str()).unwrap_or("?").to_string(),
        };
        codecs.as_array().map(|v| v.iter().map(one).collect::<Vec<_>>().join("+")).unwrap_or_default()
    }
    let meta: Value =
        fs::read(dir.join("zarr.json")).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    format!("{} {}", meta["data_type"], names(&meta["codecs"]))
}

/// Which inner chunks a stored shard holds (index entries other than the absent 2^64-1), when the
/// array's chain is a single sharding_indexed with a bytes+crc32c index; `None` otherwise.
fn inner_present(array: &Path, key: &str) -> Option<Vec<bool>> {
    let meta: Value = serde_json::from_slice(&fs::read(array.join("zarr.json")).ok()?).ok()?;
    let config = match meta["codecs"].as_array()?.as_slice() {
        [c] if c["name"] == "sharding_indexed" && c["configuration"]["index_codecs"][1]["name"] == "crc32c" => {
            &c["configuration"]
        }
        _ => return None,
    };
    let dims = |v: &Value| v.as_array().map(|d| d.iter().filter_map(Value::as_u64).product::<u64>());
    let n = (dims(&meta["chunk_grid"]["configuration"]["chunk_shape"])? / dims(&config["chunk_shape"])?) as usize;
    let shard = fs::read(array.join(key)).ok()?;
    let at = if config["index_location"] == "start" { 0 } else { shard.len().checked_sub(16 * n + 4)? };
    let index = shard.get(at..at + 16 * n)?;
    Some(index.chunks(16).map(|e| e[..8] != [0xff; 8]).collect())
}

/// Inside each shard, zarrdb must store the same inner chunks as the library (no all-fill ones).
fn same_inner_chunks(ours: &Path, theirs: &Path, keys: &BTreeSet<String>) -> Result<(), String> {
    for key in keys {
        let (a, b) = (inner_present(ours, key), inner_present(theirs, key));
        if a != b {
            return Err(format!("shard {key}: zarrdb stores inner chunks {a:?}, the fixture {b:?}"));
        }
    }
    Ok(())
}

const SUITE: Suite =
    Suite { script: "write_codec_fixtures.py", what: "codec arrays", describe: chain, check_copy: same_inner_chunks };

#[test]
fn cat_reads_codec_arrays_written_by_python() {
    cat_reads_fixtures(&SUITE);
}

#[test]
fn python_reads_codec_arrays_written_by_zarrdb() {
    python_reads_zarrdb_copies(&SUITE);
}
