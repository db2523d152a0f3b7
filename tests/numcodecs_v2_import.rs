//! Zarr v2 arrays with numcodecs filters and compressors (issue 14, "Real-world Zarr data"),
//! written by zarr-python 3 with `zarr_format=2`: delta before lz4 and (big-endian) before zlib,
//! fixedscaleoffset in F order before bz2 and big-endian before lzma, quantize to float16 before
//! lzma, bitround before lz4, astype then shuffle before zstd, packbits, and two filters in F
//! order. `zarrdb import` converts the filters to `numcodecs.<id>` codecs around `bytes`, copies
//! the chunks unchanged, `zarrdb cat` must read the values zarr-python reads and `zarrdb check`
//! must decode every chunk without a problem; the export (a v3 hierarchy over the same chunks)
//! must be read by zarr-python the same way.

use std::path::Path;
use std::process::Command;

#[path = "common/numcodecs.rs"]
mod numcodecs;

use numcodecs::{compare, finish, fixtures, python, run, REPO};

fn zarrdb() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zarrdb"))
}

#[test]
fn v2_filters_and_compressors_import_and_export() {
    let entries = fixtures("v2");
    let work = tempfile::TempDir::new().expect("temp dir");
    let db = work.path().join("db.redb");
    let source = &entries[0].store;
    assert!(entries.iter().all(|e| &e.store == source), "all v2 fixtures live in one hierarchy");
    run(zarrdb().arg("import").arg(source).arg(&db)).unwrap_or_else(|e| panic!("import: {e}"));

    let mut failures = Vec::new();
    for e in entries {
        match run(zarrdb().arg("cat").arg(&db).arg(&e.path).arg("--raw")) {
            Ok(out) => {
                if let Err(why) = compare(&out.stdout, &e.expected) {
                    failures.push(format!("{}: cat --raw: {why}", e.name));
                }
            }
            Err(why) => failures.push(format!("{}: cat: {why}", e.name)),
        }
    }

    if let Err(why) = run(zarrdb().arg("check").arg(&db)) {
        failures.push(format!("zarrdb check of the imported database: {why}"));
    }

    // The export holds v3 documents over the v2 chunks; zarr-python reads them as v3 arrays.
    let exported = work.path().join("export");
    run(zarrdb().arg("export").arg(&db).arg(&exported)).unwrap_or_else(|e| panic!("export: {e}"));
    let manifest: Vec<_> = entries
        .iter()
        .map(|e| {
            let expected = work.path().join(format!("{}.raw", e.name.replace(':', "_")));
            std::fs::write(&expected, &e.expected).expect("expected file");
            serde_json::json!({"name": e.name, "store": exported, "path": e.path, "expected": expected})
        })
        .collect();
    let manifest_path = work.path().join("manifest.json");
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let script = Path::new(REPO).join("tests/interop/numcodecs_cases.py");
    if let Err(why) = run(Command::new(python()).arg(script).arg("check").arg(&manifest_path)) {
        failures.push(format!("zarr-python reading zarrdb's export:\n{why}"));
    }
    if !failures.is_empty() {
        eprintln!("work folder kept in {}", work.keep().display());
    }
    finish("v2 arrays with numcodecs filters", failures);
}
