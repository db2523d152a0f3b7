//! The interop harness shared by `tests/interop.rs` (data types, fill values, key encodings) and
//! `tests/interop_codecs.rs` (codecs): a Python script makes zarr-python and tensorstore write
//! fixture arrays and records their content as little-endian bytes; then
//! - zarrdb reads every array (`zarrdb cat --raw`) and must return exactly those bytes;
//! - zarrdb re-creates every array from its zarr.json and content in a fresh store, must store the
//!   same chunk keys as the library did (plus any suite-specific check), and both libraries must
//!   read zarrdb's copy identically (`tests/interop/read_check.py`).
//!
//! Python comes from `ZARRDB_PYTHON` or `.venv` (`scripts/test.sh` sets both up). Without it the
//! tests fail rather than skip, so a missing environment can never pass for a green run.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::Value;
use tempfile::TempDir;
use zarrdb::{Array, ArrayMetadata, DirectoryStore, Store};

/// One family of fixtures.
pub struct Suite {
    /// The script in tests/interop/ that writes the fixtures and manifest.json.
    pub script: &'static str,
    /// What the fixtures are, for failure messages.
    pub what: &'static str,
    /// A short label of an array folder for failure messages (e.g. its codec chain).
    pub describe: fn(&Path) -> String,
    /// A further check of zarrdb's copy (`ours`: its folder) against the fixture (`theirs`), for
    /// every stored chunk key.
    pub check_copy: fn(ours: &Path, theirs: &Path, keys: &BTreeSet<String>) -> Result<(), String>,
}

mod harness;

use harness::{compare, python, run, REPO};

fn run_python(script: &str, arg: &Path) -> Result<Output, String> {
    run(Command::new(python()).arg(Path::new(REPO).join("tests/interop").join(script)).arg(arg))
}

/// A fixture directory written by a suite's script, with its manifest entries.
struct Fixtures {
    dir: TempDir,
    entries: Vec<Value>,
}

impl Fixtures {
    fn generate(script: &str) -> Fixtures {
        let dir = TempDir::new().expect("temp dir");
        run_python(script, dir.path()).unwrap_or_else(|e| panic!("writing fixtures: {e}"));
        let manifest = fs::read(dir.path().join("manifest.json")).expect("manifest.json");
        let entries: Vec<Value> = serde_json::from_slice(&manifest).expect("manifest is a JSON list");
        assert!(!entries.is_empty(), "{script} wrote no arrays");
        Fixtures { dir, entries }
    }

    /// The store folder, array path and expected content of an entry.
    fn entry(&self, e: &Value) -> (PathBuf, String, Vec<u8>) {
        let expected = fs::read(self.dir.path().join(text(e, "expected"))).expect("expected .raw file");
        (self.dir.path().join(text(e, "store")), text(e, "path").to_string(), expected)
    }

    /// Fail listing every problem; keep the fixtures on disk so they can be looked at.
    fn finish(self, what: &str, failures: Vec<String>) {
        if !failures.is_empty() {
            let kept = self.dir.keep();
            panic!(
                "{what}: {} of {} fixtures failed (fixtures kept in {}):\n{}",
                failures.len(),
                self.entries.len(),
                kept.display(),
                failures.join("\n")
            );
        }
    }
}

/// A string field of a manifest entry.
fn text<'a>(e: &'a Value, key: &str) -> &'a str {
    e[key].as_str().unwrap_or_else(|| panic!("manifest entry without \"{key}\": {e}"))
}

/// Folder of an array inside a store folder ("/a/b" -> store/a/b).
fn array_dir(store: &Path, path: &str) -> PathBuf {
    path.split('/').filter(|s| !s.is_empty()).fold(store.to_path_buf(), |d, s| d.join(s))
}

/// The chunk keys stored for an array: every file under its folder except its zarr.json.
fn chunk_keys(dir: &Path) -> BTreeSet<String> {
    fn walk(dir: &Path, prefix: &str, keys: &mut BTreeSet<String>) {
        for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            if entry.path().is_dir() {
                walk(&entry.path(), &format!("{name}/"), keys);
            } else if name != "zarr.json" {
                keys.insert(name);
            }
        }
    }
    let mut keys = BTreeSet::new();
    walk(dir, "", &mut keys);
    keys
}

/// zarrdb reads every fixture array written by zarr-python and tensorstore byte for byte.
pub fn cat_reads_fixtures(suite: &Suite) {
    let fixtures = Fixtures::generate(suite.script);
    let mut failures = Vec::new();
    for e in &fixtures.entries {
        let (store, path, want) = fixtures.entry(e);
        let cat = run(Command::new(env!("CARGO_BIN_EXE_zarrdb")).arg("cat").arg(&store).arg(&path).arg("--raw"));
        if let Err(why) = cat.and_then(|out| compare(&out.stdout, &want)) {
            let label = (suite.describe)(&array_dir(&store, &path));
            failures.push(format!("{}{path} [{label}] (written by {}): {why}", text(e, "store"), text(e, "writer")));
        }
    }
    fixtures.finish(&format!("zarrdb cat of {} written by zarr-python and tensorstore", suite.what), failures);
}

/// Re-create one fixture array with zarrdb from its zarr.json and content, and check that it reads
/// back and stores the same chunks as the library that wrote the fixture.
fn rewrite(
    suite: &Suite,
    store: &Arc<dyn Store>,
    store_dir: &Path,
    src_dir: &Path,
    path: &str,
    raw: &[u8],
) -> Result<(), String> {
    let json = fs::read(array_dir(src_dir, path).join("zarr.json")).map_err(|e| format!("zarr.json: {e}"))?;
    let metadata = ArrayMetadata::from_json(&json).map_err(|e| format!("from_json: {e}"))?;
    let array = Array::create(store.clone(), path, metadata).map_err(|e| format!("create: {e}"))?;
    let shape = array.shape().to_vec();
    let origin = vec![0; shape.len()];
    // The whole array, fill included: zarrdb must itself leave out chunks (and inner chunks) that
    // hold only the fill value.
    array.write_region_bytes(&origin, &shape, raw).map_err(|e| format!("write_region_bytes: {e}"))?;
    let again = Array::open(store.clone(), path).map_err(|e| format!("reopen: {e}"))?;
    let back = again.read_region_bytes(&origin, &shape).map_err(|e| format!("read_region_bytes: {e}"))?;
    compare(&back, raw).map_err(|e| format!("zarrdb read back its own write: {e}"))?;
    let (ours_dir, theirs_dir) = (array_dir(store_dir, path), array_dir(src_dir, path));
    let (ours, theirs) = (chunk_keys(&ours_dir), chunk_keys(&theirs_dir));
    if ours != theirs {
        return Err(format!(
            "stored chunk keys differ: only zarrdb {:?}, only the fixture {:?}",
            ours.difference(&theirs).collect::<Vec<_>>(),
            theirs.difference(&ours).collect::<Vec<_>>()
        ));
    }
    (suite.check_copy)(&ours_dir, &theirs_dir, &ours)
}

/// zarr-python and tensorstore read every array that zarrdb re-created from the fixtures.
pub fn python_reads_zarrdb_copies(suite: &Suite) {
    let fixtures = Fixtures::generate(suite.script);
    let out = TempDir::new().expect("temp dir");
    // One fresh zarrdb store per fixture store, holding the same array paths.
    let mut stores: BTreeMap<String, (PathBuf, Arc<dyn Store>)> = BTreeMap::new();
    let (mut manifest, mut failures) = (Vec::new(), Vec::new());
    for e in &fixtures.entries {
        let (src_dir, path, raw) = fixtures.entry(e);
        let src_name = text(e, "store").to_string();
        let name = format!("zarrdb_{src_name}");
        let (store_dir, store) = stores.entry(name.clone()).or_insert_with(|| {
            let dir = out.path().join(&name);
            let store: Arc<dyn Store> = Arc::new(DirectoryStore::create(&dir).expect("directory store"));
            (dir, store)
        });
        if let Err(why) = rewrite(suite, store, store_dir, &src_dir, &path, &raw) {
            failures.push(format!("{src_name}{path} [{}]: {why}", (suite.describe)(&array_dir(&src_dir, &path))));
            continue;
        }
        // Same entry (skip_readers included) pointing at zarrdb's copy; the expected bytes stay in
        // the fixture directory, by absolute path.
        let mut entry = e.clone();
        entry["store"] = Value::from(name);
        entry["writer"] = Value::from("zarrdb");
        entry["expected"] = Value::from(fixtures.dir.path().join(text(e, "expected")).to_str().unwrap());
        manifest.push(entry);
    }
    let manifest_path = out.path().join("manifest.json");
    fs::write(&manifest_path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    if let Err(why) = run_python("read_check.py", &manifest_path) {
        failures.push(format!("zarr-python / tensorstore could not read zarrdb's arrays back:\n{why}"));
    }
    if !failures.is_empty() {
        eprintln!("zarrdb-written stores kept in {}", out.keep().display());
    }
    fixtures.finish(&format!("{} written by zarrdb", suite.what), failures);
}
