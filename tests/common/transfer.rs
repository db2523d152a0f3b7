//! The harness of `tests/transfer_interop.rs`: fixture hierarchies written once by
//! `tests/interop/transfer_write.py`, and one function that takes a fixture through
//! `zarrdb import`, `zarrdb cat`, `zarrdb check` and `zarrdb export` (to a folder and to a zip) and
//! collects every difference it finds.
//!
//! Python comes from `ZARRDB_PYTHON` or `.venv` (`scripts/test.sh` sets both up). Without it the
//! tests fail rather than skip, so a missing environment can never pass for a green run.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;
use tempfile::TempDir;

#[path = "harness.rs"]
pub mod harness;

use harness::{compare, python, run, REPO};

fn script(name: &str) -> Command {
    let mut cmd = Command::new(python());
    cmd.arg(Path::new(REPO).join("tests/interop").join(name));
    cmd
}

fn zarrdb() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zarrdb"))
}

/// The fixture hierarchies and their manifest, generated once per test process in
/// `target/tmp/transfer_interop/fixtures`; the work dirs of failed fixtures are kept beside it.
/// Both are replaced on the next run.
pub struct Fixtures {
    dir: PathBuf,
    manifest: PathBuf,
    by_name: BTreeMap<String, Value>,
}

pub fn fixtures() -> &'static Fixtures {
    static FIXTURES: OnceLock<Fixtures> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        // Every test of the process waits here, so no work dir of this run exists yet: clear the
        // previous run's fixtures and kept work dirs.
        if work_root().exists() {
            fs::remove_dir_all(work_root()).expect("removing the previous run's fixtures");
        }
        let dir = work_root().join("fixtures");
        fs::create_dir_all(&dir).expect("fixture dir");
        run(script("transfer_write.py").arg(&dir)).unwrap_or_else(|e| panic!("writing the fixtures: {e}"));
        let manifest = dir.join("manifest.json");
        let doc: Value = serde_json::from_slice(&fs::read(&manifest).expect("manifest.json")).expect("manifest JSON");
        let by_name = doc["fixtures"]
            .as_array()
            .expect("manifest has a fixtures list")
            .iter()
            .map(|f| (text(f, "name").to_string(), f.clone()))
            .collect();
        Fixtures { dir, manifest, by_name }
    })
}

impl Fixtures {
    /// The folder or archive of the fixture `name`.
    pub fn source(&self, name: &str) -> PathBuf {
        let fixture = self.by_name.get(name).unwrap_or_else(|| panic!("no fixture {name} in the manifest"));
        self.dir.join(text(fixture, "source"))
    }

    /// zarr-python and tensorstore read the fixture `name` from each of `roots` (folders, `.zip`
    /// archives, `s3://` locators) as the manifest describes it (`transfer_check.py check`).
    pub fn check(&self, name: &str, roots: &[&str]) -> Result<(), String> {
        run(script("transfer_check.py").arg("check").arg(&self.manifest).arg(name).args(roots)).map(drop)
    }
}

fn work_root() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("transfer_interop")
}

/// A string field of a manifest object.
fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_else(|| panic!("manifest object without \"{key}\": {v}"))
}

/// Where a fixture's hierarchy lands in the database (`import --at`) and is exported from
/// (`export --node`).
#[derive(Clone, Copy)]
pub enum At {
    Root,
    Node(&'static str),
}

impl At {
    fn join(self, path: &str) -> String {
        match self {
            At::Root => path.to_string(),
            At::Node(at) if path == "/" => at.to_string(),
            At::Node(at) => format!("{at}{path}"),
        }
    }
}

/// Take each named fixture through import and export (see [`round_trip`]); panic listing every
/// difference of every fixture.
pub fn round_trips(scenario: &str, names: &[(&str, At)]) {
    let fixtures = fixtures();
    let mut failures = Vec::new();
    for &(name, at) in names {
        let fixture = fixtures.by_name.get(name).unwrap_or_else(|| panic!("no fixture {name} in the manifest"));
        let work = TempDir::with_prefix_in(format!("{name}-"), work_root()).expect("work dir");
        let found = round_trip(fixtures, fixture, at, work.path());
        if !found.is_empty() {
            let kept = work.keep();
            failures.push(format!(
                "{name} ({} differences; database and exports kept in {}):\n  {}",
                found.len(),
                kept.display(),
                found.join("\n  ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{scenario}: {} of {} fixtures failed (fixtures in {}):\n{}",
        failures.len(),
        names.len(),
        fixtures.dir.display(),
        failures.join("\n")
    );
}

/// One fixture: import into a fresh redb database, `cat --raw` every array, `check` the database,
/// export to a folder and to a zip, read both exports with zarr-python and tensorstore
/// (`transfer_check.py`), and compare the stored keys and bytes of the exports with the source.
fn round_trip(fixtures: &Fixtures, fixture: &Value, at: At, work: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    let source = fixtures.dir.join(text(fixture, "source"));
    let db = work.join("db.redb");
    let mut import = zarrdb();
    import.arg("import").arg(&source).arg(&db);
    if let At::Node(node) = at {
        import.args(["--at", node]);
    }
    if let Err(e) = run(&mut import) {
        return vec![format!("import: {e}")];
    }

    let nodes = fixture["nodes"].as_object().expect("nodes object");
    for (path, node) in nodes {
        if node["node_type"] != "array" {
            continue;
        }
        let want = fs::read(fixtures.dir.join(text(node, "expected"))).expect("expected .raw file");
        let node_path = at.join(path);
        match run(zarrdb().arg("cat").arg(&db).arg(&node_path).arg("--raw")) {
            Ok(out) => {
                if let Err(why) = compare(&out.stdout, &want) {
                    failures.push(format!("cat --raw {node_path}: {why}"));
                }
            }
            Err(e) => failures.push(format!("cat {node_path}: {e}")),
        }
    }
    if let Err(e) = run(zarrdb().arg("check").arg(&db)) {
        failures.push(format!("check of the imported database: {e}"));
    }

    let (out_dir, out_zip) = (work.join("out"), work.join("out.zip"));
    let mut exported = Vec::new();
    for dst in [&out_dir, &out_zip] {
        let mut export = zarrdb();
        export.arg("export").arg(&db).arg(dst);
        if let At::Node(node) = at {
            export.args(["--node", node]);
        }
        match run(&mut export) {
            Ok(_) => exported.push(dst.clone()),
            Err(e) => failures.push(format!("export: {e}")),
        }
    }
    if exported.is_empty() {
        return failures;
    }

    let mut check = script("transfer_check.py");
    check.arg("check").arg(&fixtures.manifest).arg(text(fixture, "name")).args(&exported);
    if let Err(e) = run(&mut check) {
        failures.push(format!("zarr-python / tensorstore read the exports differently:\n{e}"));
    }

    let src = match stored(&source, text(fixture, "prefix"), &work.join("source-unzipped")) {
        Ok(src) => src,
        Err(e) => {
            failures.push(e);
            return failures;
        }
    };
    let mut outputs = Vec::new();
    for dst in &exported {
        let what = dst.file_name().unwrap().to_string_lossy().to_string();
        let got = match stored(dst, "", &work.join("out-unzipped")) {
            Ok(got) => got,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let result = match text(fixture, "format") {
            "v3" => same_v3(&src, &got),
            "v2" => same_chunk_keys(&src, &got, nodes, &V2_METADATA),
            "v1" => same_chunk_keys(&src, &got, nodes, &V1_METADATA),
            _ => same_draft_chunks(&src, &got, nodes),
        };
        failures.extend(result.into_iter().map(|f| format!("{what}: {f}")));
        outputs.push(got);
    }
    if let [dir, zip] = outputs.as_slice() {
        failures.extend(key_sets_named("", ("the folder export", "the zip export"), dir.keys(), zip.keys()));
        for (key, value) in dir {
            if zip.get(key).is_some_and(|z| z != value) {
                failures.push(format!("{key} differs between the folder and the zip export"));
            }
        }
    }
    failures
}

/// Every stored value of a folder or (through Python's zipfile, the last entry of a name winning)
/// of a zip archive, by key, under a prefix.
fn stored(location: &Path, prefix: &str, scratch: &Path) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let folder = if location.extension().is_some_and(|e| e == "zip") {
        if scratch.exists() {
            fs::remove_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
        }
        run(script("transfer_check.py").arg("unzip").arg(location).arg(scratch).arg(prefix))
            .map_err(|e| format!("unzip {}: {e}", location.display()))?;
        scratch.to_path_buf()
    } else {
        location.join(prefix)
    };
    let mut keys = BTreeMap::new();
    walk(&folder, "", &mut keys).map_err(|e| format!("reading {}: {e}", folder.display()))?;
    Ok(keys)
}

fn walk(dir: &Path, prefix: &str, keys: &mut BTreeMap<String, Vec<u8>>) -> std::io::Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        if entry.file_type()?.is_dir() {
            walk(&entry.path(), &format!("{name}/"), keys)?;
        } else {
            keys.insert(name, fs::read(entry.path())?);
        }
    }
    Ok(())
}

fn is_metadata(key: &str) -> bool {
    key == "zarr.json" || key.ends_with("/zarr.json")
}

/// Zarr v3 sources: the same keys; chunk and shard values byte-identical, zarr.json documents
/// equal as JSON.
fn same_v3(src: &BTreeMap<String, Vec<u8>>, got: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let mut failures = key_sets("", src.keys(), got.keys());
    for (key, want) in src {
        let Some(have) = got.get(key) else { continue };
        if is_metadata(key) {
            // Consolidated metadata is never imported, and an export writes it afresh
            // (docs/format.md), so it is not compared here.
            let parse =
                |b: &[u8]| serde_json::from_slice::<Value>(b).map(without_consolidated).map_err(|e| e.to_string());
            match (parse(have), parse(want)) {
                (Ok(a), Ok(b)) if a == b => {}
                (Ok(a), Ok(b)) => failures.push(format!("{key}: exported {a}, source {b}")),
                (a, b) => failures.push(format!("{key}: not JSON: exported {a:?}, source {b:?}")),
            }
        } else if let Err(why) = compare(have, want) {
            failures.push(format!("chunk {key} not copied as it was: {why}"));
        }
    }
    failures
}

fn without_consolidated(mut document: Value) -> Value {
    if let Some(obj) = document.as_object_mut() {
        obj.remove("consolidated_metadata");
    }
    document
}

const V2_METADATA: [&str; 4] = [".zarray", ".zattrs", ".zgroup", ".zmetadata"];
const V1_METADATA: [&str; 2] = ["meta", "attrs"];

/// Zarr v2 and v1 sources: every chunk keeps its key (the v2 chunk key encoding) and its bytes,
/// and the only other keys of the export are the zarr.json of each node that had metadata. Also
/// used for draft sources, with their chunks renamed to the keys they must have.
fn same_chunk_keys(
    src: &BTreeMap<String, Vec<u8>>,
    got: &BTreeMap<String, Vec<u8>>,
    nodes: &ManifestNodes,
    metadata_names: &[&str],
) -> Vec<String> {
    let is_source_metadata = |k: &str| metadata_names.iter().any(|m| k == *m || k.ends_with(&format!("/{m}")));
    let chunks: BTreeMap<_, _> = src.iter().filter(|(k, _)| !is_source_metadata(k)).collect();
    let mut failures = key_sets("chunk ", chunks.keys().copied(), got.keys().filter(|k| !is_metadata(k)));
    failures.extend(metadata_keys(got, nodes));
    for (key, want) in chunks {
        if let Some(have) = got.get(key) {
            if let Err(why) = compare(have, want) {
                failures.push(format!("chunk {key} not copied as it was: {why}"));
            }
        }
    }
    failures
}

type ManifestNodes = serde_json::Map<String, Value>;

/// The zarr.json keys of an export: one per explicit node of the manifest, none for implicit
/// groups unless import makes them groups (`imported_as`).
fn metadata_keys(got: &BTreeMap<String, Vec<u8>>, nodes: &ManifestNodes) -> Vec<String> {
    let explicit = |n: &Value| n["node_type"] != "implicit" || n["imported_as"]["node_type"] == "group";
    let want = nodes.iter().filter(|(_, n)| explicit(n)).map(|(p, _)| {
        if p == "/" {
            "zarr.json".to_string()
        } else {
            format!("{}/zarr.json", &p[1..])
        }
    });
    key_sets_named("metadata ", ("the manifest", "the export"), want, got.keys().filter(|k| is_metadata(k)).cloned())
}

/// 2020-draft sources: docs/format.md renames a chunk `data/root/P/c0/1` to `P/c/0/1` (the draft's
/// `c` directly followed by the coordinates; a 0-d array's `c` stays `c`) and keeps its bytes; the
/// export must hold exactly those chunks, and the zarr.json documents.
fn same_draft_chunks(
    src: &BTreeMap<String, Vec<u8>>,
    got: &BTreeMap<String, Vec<u8>>,
    nodes: &ManifestNodes,
) -> Vec<String> {
    let arrays: Vec<&str> =
        nodes.iter().filter(|(_, n)| n["node_type"] == "array").map(|(p, _)| p.trim_start_matches('/')).collect();
    let mut renamed = BTreeMap::new();
    let mut failures = Vec::new();
    for (key, value) in src.iter().filter(|(k, _)| k.starts_with("data/root/")) {
        let rest = &key["data/root/".len()..];
        // The longest array path the key lies under (a root array has the path "").
        let array = arrays
            .iter()
            .filter(|a| a.is_empty() || rest.starts_with(&format!("{a}/")))
            .max_by_key(|a| a.len())
            .copied();
        let Some(array) = array else {
            failures.push(format!("source key {key} is under no array of the manifest"));
            continue;
        };
        let chunk = if array.is_empty() { rest } else { &rest[array.len() + 1..] };
        let coordinates = chunk.strip_prefix('c').unwrap_or_else(|| panic!("draft chunk key {key} without c"));
        let prefix = if array.is_empty() { String::new() } else { format!("{array}/") };
        let v3 = if coordinates.is_empty() { format!("{prefix}c") } else { format!("{prefix}c/{coordinates}") };
        renamed.insert(v3, value.clone());
    }
    failures.extend(same_chunk_keys(&renamed, got, nodes, &[]));
    failures
}

/// Differences between the key sets of the source (`want`) and an export (`got`), as failure lines.
fn key_sets(
    what: &str,
    want: impl IntoIterator<Item = impl AsRef<str>>,
    got: impl IntoIterator<Item = impl AsRef<str>>,
) -> Vec<String> {
    key_sets_named(what, ("the source", "the export"), want, got)
}

fn key_sets_named(
    what: &str,
    (want_name, got_name): (&str, &str),
    want: impl IntoIterator<Item = impl AsRef<str>>,
    got: impl IntoIterator<Item = impl AsRef<str>>,
) -> Vec<String> {
    let want: BTreeSet<String> = want.into_iter().map(|k| k.as_ref().to_string()).collect();
    let got: BTreeSet<String> = got.into_iter().map(|k| k.as_ref().to_string()).collect();
    let mut failures = Vec::new();
    let missing: Vec<_> = want.difference(&got).collect();
    if !missing.is_empty() {
        failures.push(format!("{what}keys only in {want_name}: {missing:?}"));
    }
    let extra: Vec<_> = got.difference(&want).collect();
    if !extra.is_empty() {
        failures.push(format!("{what}keys only in {got_name}: {extra:?}"));
    }
    failures
}
