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

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::Value;
use tempfile::TempDir;
use zarrdb::{Array, ArrayMetadata, DirectoryStore, Store};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

fn python() -> PathBuf {
    let hint = "run scripts/test.sh or set ZARRDB_PYTHON to a python with tests/interop/requirements.txt";
    let p = std::env::var_os("ZARRDB_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(REPO).join(".venv/bin/python"));
    assert!(p.exists(), "no Python at {} for the interop tests; {hint}", p.display());
    p
}

/// Run a command to completion; `Err` describes the failure with its output.
fn run(cmd: &mut Command) -> Result<Output, String> {
    let out = cmd.output().map_err(|e| format!("could not start {cmd:?}: {e}"))?;
    if out.status.success() {
        return Ok(out);
    }
    Err(format!(
        "{cmd:?} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

fn run_python(script: &str, arg: &Path) -> Result<Output, String> {
    run(Command::new(python()).arg(Path::new(REPO).join("tests/interop").join(script)).arg(arg))
}

/// The fixture directory written by write_codec_fixtures.py and its manifest entries.
struct Fixtures {
    dir: TempDir,
    entries: Vec<Value>,
}

impl Fixtures {
    fn generate() -> Fixtures {
        let dir = TempDir::new().expect("temp dir");
        run_python("write_codec_fixtures.py", dir.path()).unwrap_or_else(|e| panic!("writing fixtures: {e}"));
        let manifest = fs::read(dir.path().join("manifest.json")).expect("manifest.json");
        let entries: Vec<Value> = serde_json::from_slice(&manifest).expect("manifest is a JSON list");
        assert!(!entries.is_empty(), "write_codec_fixtures.py wrote no arrays");
        Fixtures { dir, entries }
    }

    /// Store folder, array path and expected content of an entry.
    fn entry(&self, e: &Value) -> (PathBuf, String, Vec<u8>) {
        let expected = fs::read(self.dir.path().join(text(e, "expected"))).expect("expected .raw file");
        (self.dir.path().join(text(e, "store")), text(e, "path").to_string(), expected)
    }

    /// Fail listing every problem, keeping the fixtures on disk to look at.
    fn finish(self, what: &str, failures: Vec<String>) {
        if !failures.is_empty() {
            let (n, total) = (failures.len(), self.entries.len());
            let kept = self.dir.keep();
            panic!("{what}: {n} of {total} fixtures failed (kept in {}):\n{}", kept.display(), failures.join("\n"));
        }
    }
}

fn text<'a>(e: &'a Value, key: &str) -> &'a str {
    e[key].as_str().unwrap_or_else(|| panic!("manifest entry without \"{key}\": {e}"))
}

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

/// First byte where two contents differ.
fn compare(got: &[u8], want: &[u8]) -> Result<(), String> {
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

fn array_dir(store: &Path, path: &str) -> PathBuf {
    path.split('/').filter(|s| !s.is_empty()).fold(store.to_path_buf(), |d, s| d.join(s))
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

/// Every file under an array's folder except its zarr.json: the stored chunk (shard) keys.
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

#[test]
fn cat_reads_codec_arrays_written_by_python() {
    let fixtures = Fixtures::generate();
    let mut failures = Vec::new();
    for e in &fixtures.entries {
        let (store, path, want) = fixtures.entry(e);
        let cat = run(Command::new(env!("CARGO_BIN_EXE_zarrdb")).arg("cat").arg(&store).arg(&path).arg("--raw"));
        if let Err(why) = cat.and_then(|out| compare(&out.stdout, &want)) {
            let chain = chain(&array_dir(&store, &path));
            failures.push(format!("{}{path} [{chain}] (written by {}): {why}", text(e, "store"), text(e, "writer")));
        }
    }
    fixtures.finish("zarrdb cat of codec arrays written by zarr-python and tensorstore", failures);
}

/// Re-create one fixture array with zarrdb from its zarr.json, write its whole content, read it
/// back and compare the stored chunk keys with the library's.
fn rewrite(store: &Arc<dyn Store>, store_dir: &Path, src_dir: &Path, path: &str, raw: &[u8]) -> Result<(), String> {
    let json = fs::read(array_dir(src_dir, path).join("zarr.json")).map_err(|e| format!("zarr.json: {e}"))?;
    let metadata = ArrayMetadata::from_json(&json).map_err(|e| format!("from_json: {e}"))?;
    let array = Array::create(store.clone(), path, metadata).map_err(|e| format!("create: {e}"))?;
    let shape = array.shape().to_vec();
    let origin = vec![0; shape.len()];
    // Fill included: zarrdb itself must leave out all-fill shards and inner chunks.
    array.write_region_bytes(&origin, &shape, raw).map_err(|e| format!("write_region_bytes: {e}"))?;
    let again = Array::open(store.clone(), path).map_err(|e| format!("reopen: {e}"))?;
    let back = again.read_region_bytes(&origin, &shape).map_err(|e| format!("read_region_bytes: {e}"))?;
    compare(&back, raw).map_err(|e| format!("zarrdb read back its own write: {e}"))?;
    let (ours, theirs) = (chunk_keys(&array_dir(store_dir, path)), chunk_keys(&array_dir(src_dir, path)));
    if ours != theirs {
        let only = |a: &BTreeSet<String>, b: &BTreeSet<String>| a.difference(b).cloned().collect::<Vec<_>>();
        return Err(format!(
            "stored keys differ: only zarrdb {:?}, only the fixture {:?}",
            only(&ours, &theirs),
            only(&theirs, &ours)
        ));
    }
    // Inside each shard, zarrdb must store the same inner chunks (no all-fill ones).
    for key in &ours {
        let (a, b) = (inner_present(&array_dir(store_dir, path), key), inner_present(&array_dir(src_dir, path), key));
        if a != b {
            return Err(format!("shard {key}: zarrdb stores inner chunks {a:?}, the fixture {b:?}"));
        }
    }
    Ok(())
}

#[test]
fn python_reads_codec_arrays_written_by_zarrdb() {
    let fixtures = Fixtures::generate();
    let out = TempDir::new().expect("temp dir");
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
        if let Err(why) = rewrite(store, store_dir, &src_dir, &path, &raw) {
            failures.push(format!("{src_name}{path} [{}]: {why}", chain(&array_dir(&src_dir, &path))));
            continue;
        }
        // The same entry (skip_readers included) pointing at zarrdb's copy; expected bytes by
        // absolute path in the fixture directory.
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
    fixtures.finish("codec arrays written by zarrdb", failures);
}
