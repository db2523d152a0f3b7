//! The harness of `tests/numcodecs_*.rs`: `tests/interop/numcodecs_cases.py` has zarr-python 3
//! write arrays with numcodecs' filters and compressors (v3, and `zarr_format=2` for the import),
//! recording for each the values written and the values zarr-python reads back. Fixtures are
//! written once per test process under the target's tmp folder, one folder per test file.
//!
//! Python comes from `ZARRDB_PYTHON` or `.venv` (`scripts/test.sh`); without it the tests fail.

// Each test file uses part of the harness.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use zarrdb::{Array, ArrayMetadata, DirectoryStore, Store};

#[path = "harness.rs"]
mod harness;

pub use harness::{compare, python, run, REPO};

/// One fixture array.
pub struct Entry {
    pub name: String,
    pub store: PathBuf,
    pub path: String,
    /// The values written, C-order little-endian bytes.
    pub input: Vec<u8>,
    /// What zarr-python reads back (lossy filters change values).
    pub expected: Vec<u8>,
    /// numcodecs' encoding is deterministic, so zarrdb must write the same chunk bytes.
    pub exact: bool,
    expected_file: String,
}

fn script() -> Command {
    let mut cmd = Command::new(python());
    cmd.arg(Path::new(REPO).join("tests/interop/numcodecs_cases.py"));
    cmd
}

/// The fixtures of one kind ("filter", "compressor", "v2"), written once per test process.
pub fn fixtures(kind: &str) -> &'static [Entry] {
    static ALL: OnceLock<(PathBuf, Vec<Value>)> = OnceLock::new();
    let (dir, manifest) = ALL.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("numcodecs_{}", env!("CARGO_CRATE_NAME")));
        if dir.exists() {
            fs::remove_dir_all(&dir).expect("removing the previous run's fixtures");
        }
        fs::create_dir_all(&dir).expect("fixture dir");
        run(script().arg("write").arg(&dir)).unwrap_or_else(|e| panic!("writing the fixtures: {e}"));
        let manifest = serde_json::from_slice(&fs::read(dir.join("manifest.json")).expect("manifest")).expect("JSON");
        (dir, manifest)
    });
    static ENTRIES: OnceLock<Vec<Entry>> = OnceLock::new();
    let all = ENTRIES.get_or_init(|| {
        let text = |e: &Value, k: &str| e[k].as_str().unwrap_or_else(|| panic!("no {k} in {e}")).to_string();
        manifest
            .iter()
            .map(|e| Entry {
                name: format!("{}:{}", text(e, "kind"), text(e, "name")),
                store: dir.join(text(e, "store")),
                path: text(e, "path"),
                input: fs::read(dir.join(text(e, "input"))).expect("input"),
                expected: fs::read(dir.join(text(e, "expected"))).expect("expected"),
                exact: e["exact"].as_bool().unwrap_or(false),
                expected_file: dir.join(text(e, "expected")).to_string_lossy().into_owned(),
            })
            .collect()
    });
    let prefix = format!("{kind}:");
    let start = all.iter().position(|e| e.name.starts_with(&prefix)).unwrap_or_else(|| panic!("no {kind} fixtures"));
    let end = all[start..].iter().position(|e| !e.name.starts_with(&prefix)).map_or(all.len(), |n| start + n);
    &all[start..end]
}

/// Folder of an array inside a store folder.
pub fn array_dir(store: &Path, path: &str) -> PathBuf {
    path.split('/').filter(|s| !s.is_empty()).fold(store.to_path_buf(), |d, s| d.join(s))
}

/// The whole content of an array, read by zarrdb.
pub fn read_all(store: Arc<dyn Store>, path: &str) -> Result<Vec<u8>, String> {
    let array = Array::open(store, path).map_err(|e| format!("open: {e}"))?;
    let shape = array.shape().to_vec();
    array.read_region_bytes(&vec![0; shape.len()], &shape).map_err(|e| format!("read: {e}"))
}

/// Panic listing every failure.
pub fn finish(what: &str, failures: Vec<String>) {
    assert!(failures.is_empty(), "{what}: {} failures:\n{}", failures.len(), failures.join("\n"));
}

/// zarrdb reads every fixture array of `kind` as zarr-python does.
pub fn reads_fixtures(kind: &str) {
    let mut failures = Vec::new();
    for e in fixtures(kind) {
        let store: Arc<dyn Store> = Arc::new(DirectoryStore::open(&e.store).expect("fixture store"));
        if let Err(why) = read_all(store, &e.path).and_then(|got| compare(&got, &e.expected)) {
            failures.push(format!("{}: {why}", e.name));
        }
    }
    finish(&format!("zarrdb reading numcodecs {kind} arrays written by zarr-python"), failures);
}

fn chunk_files(dir: &Path) -> BTreeSet<PathBuf> {
    fn walk(dir: &Path, base: &Path, out: &mut BTreeSet<PathBuf>) {
        for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                walk(&p, base, out);
            } else if p.file_name().is_some_and(|n| n != "zarr.json") {
                out.insert(p.strip_prefix(base).expect("below base").to_path_buf());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

/// Re-create one fixture with zarrdb from its zarr.json and written values.
fn rewrite(e: &Entry, store: &Arc<dyn Store>, store_dir: &Path) -> Result<(), String> {
    let json = fs::read(array_dir(&e.store, &e.path).join("zarr.json")).map_err(|e| e.to_string())?;
    let meta = ArrayMetadata::from_json(&json).map_err(|e| format!("from_json: {e}"))?;
    let array = Array::create(store.clone(), &e.path, meta).map_err(|e| format!("create: {e}"))?;
    let shape = array.shape().to_vec();
    array.write_region_bytes(&vec![0; shape.len()], &shape, &e.input).map_err(|e| format!("write: {e}"))?;
    compare(&read_all(store.clone(), &e.path)?, &e.expected).map_err(|w| format!("zarrdb reads its write: {w}"))?;
    let (ours, theirs) = (array_dir(store_dir, &e.path), array_dir(&e.store, &e.path));
    let (ours_keys, theirs_keys) = (chunk_files(&ours), chunk_files(&theirs));
    if ours_keys != theirs_keys {
        return Err(format!("chunk files differ: zarrdb {ours_keys:?}, zarr-python {theirs_keys:?}"));
    }
    for key in ours_keys.iter().filter(|_| e.exact) {
        let (a, b) = (fs::read(ours.join(key)).unwrap(), fs::read(theirs.join(key)).unwrap());
        compare(&a, &b).map_err(|w| format!("chunk {} is not numcodecs' encoding: {w}", key.display()))?;
    }
    Ok(())
}

/// zarrdb writes every fixture of `kind` again: it reads back what zarr-python read, stores the
/// same chunk files, byte for byte where numcodecs is deterministic, and zarr-python reads
/// zarrdb's arrays as it read its own.
pub fn writes_like_numcodecs(kind: &str) {
    let out = tempfile::TempDir::new().expect("temp dir");
    let store_dir = out.path().join("zarrdb");
    let store: Arc<dyn Store> = Arc::new(DirectoryStore::create(&store_dir).expect("store"));
    let (mut failures, mut manifest) = (Vec::new(), Vec::new());
    for e in fixtures(kind) {
        match rewrite(e, &store, &store_dir) {
            Err(why) => failures.push(format!("{}: {why}", e.name)),
            Ok(()) => manifest.push(serde_json::json!({"name": e.name, "store": store_dir, "path": e.path,
                "expected": e.expected_file})),
        }
    }
    let manifest_path = out.path().join("manifest.json");
    fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    if let Err(why) = run(script().arg("check").arg(&manifest_path)) {
        failures.push(format!("zarr-python reading zarrdb's arrays:\n{why}"));
    }
    if !failures.is_empty() {
        eprintln!("zarrdb's arrays kept in {}", out.keep().display());
    }
    finish(&format!("zarrdb writing numcodecs {kind} arrays"), failures);
}
