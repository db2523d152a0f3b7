//! Import and export with real clients (the issue "Import and export: directory and zip layouts,
//! Zarr v3, v2, v1 and the 2020 draft", acceptance tests 1 and 2).
//!
//! `tests/interop/transfer_write.py` writes source hierarchies once per run: zarr-python v3 in a
//! folder, through its ZipStore (duplicate entries) and zipped with Python's zipfile from within
//! the hierarchy (stored) and from its parent folder (deflated, directory entries); tensorstore v3
//! in a folder and a zip; zarr-python `zarr_format=2` (C and F order, both separators, blosc, zlib,
//! gzip, zstd, NaN and null fill values, consolidated metadata); a hand-made v1 array and a
//! hand-made 2020-draft hierarchy. Groups with attributes, implicit groups, many data types and
//! codecs, sharding, partly written arrays, edge chunks and a 0-d array are spread over them. Its
//! manifest records every node's attributes and every array's full content.
//!
//! For each fixture (`common/transfer.rs`, `round_trip`): `zarrdb import` into a fresh redb file;
//! `zarrdb cat --raw` of every array equals the expected bytes; `zarrdb check` finds no problem;
//! `zarrdb export` to a folder and to a `.zip`; zarr-python and tensorstore read both exports with
//! identical values, shapes and attributes (`tests/interop/transfer_check.py`, which also holds the
//! zip to stored entries, no duplicates, zarr.json at the root); and the stored bytes: a v3 export
//! holds exactly the source's keys with byte-identical chunks and equal zarr.json documents; a v2
//! or v1 export keeps every chunk's key and bytes; a draft export holds the source's chunk bytes
//! under the v3 keys docs/format.md gives (`data/root/P/c0/1` -> `P/c/0/1`); every export has a
//! zarr.json for each node with metadata and none for implicit groups (but for those of a draft,
//! which import makes groups, as docs/format.md says). The two exports hold the same keys and bytes.
//!
//! Python comes from `ZARRDB_PYTHON` or `.venv`; without it the tests fail rather than skip.

#[path = "common/transfer.rs"]
#[expect(dead_code, reason = "the round trips check exports themselves")]
mod transfer;

use transfer::{round_trips, At};

#[test]
fn v3_directory_round_trip() {
    round_trips("zarr-python v3 folder", &[("zp_v3_dir", At::Root)]);
}

#[test]
fn v3_zip_round_trip() {
    round_trips(
        "zarr-python v3 zip archives",
        &[("zp_v3_zipstore", At::Root), ("zp_v3_within", At::Root), ("zp_v3_parent", At::Root)],
    );
}

/// Imported below the root (`--at`) and exported from there (`--node`).
#[test]
fn tensorstore_round_trip() {
    round_trips(
        "tensorstore v3 folder and zip",
        &[("ts_v3_dir", At::Node("/imported/ts")), ("ts_v3_zip", At::Node("/imported/ts_zip"))],
    );
}

#[test]
fn v2_imports() {
    round_trips("zarr-python zarr_format=2", &[("zp_v2_dir", At::Root), ("zp_v2_consolidated", At::Root)]);
}

/// The v1 array lands once at the root and once inside a group path.
#[test]
fn v1_and_draft_import() {
    round_trips(
        "hand-made v1 and 2020 draft",
        &[("v1_c", At::Root), ("v1_f", At::Node("/legacy/v1_f")), ("draft", At::Root)],
    );
}
