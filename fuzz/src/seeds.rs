//! The seed corpus of every target (`fuzz/seeds/<target>/`, committed): inputs made by zarrdb
//! itself (every codec chain of the `codecs` target, shards of every `shard_index`
//! configuration, commit log records, operation sequences, damage to a history's records,
//! exported zip archives, `.npy` files), the metadata fixtures of `tests/fixtures/`, and, given a
//! folder of the fixtures the Python interop scripts write (`tests/interop/*.py`: zarr-python,
//! tensorstore, numcodecs and NumPy output), the documents, chunks, archives and `.npy` files
//! found in it.
//!
//! Written by `ZARRDB_FUZZ_FIXTURES=<folder> cargo test --manifest-path fuzz/Cargo.toml --lib
//! -- --ignored write_seeds` (fuzz/README.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use zarrdb::transfer::NpyHeader;
use zarrdb::{Array, ArrayMetadata, DataType, Database, ExportOptions, Group, MemoryStore, Store};

use crate::database::Op;

/// The targets, as named in `fuzz/Cargo.toml` and `fuzz/seeds/`.
pub const TARGETS: [&str; 8] = ["codecs", "commit_log", "database", "history", "metadata", "npy", "shard_index", "zip"];

/// Seeds larger than this are left out: the corpus stays small, and libFuzzer's default
/// `-max_len` would cut them anyway.
const MAX_SEED: usize = 32 << 10;
/// Seeds per target taken from the fixture folder, at most.
const MAX_FOUND: usize = 60;

/// The seeds of each target by name, before they are written.
#[derive(Default)]
pub struct Corpus(BTreeMap<&'static str, BTreeMap<String, Vec<u8>>>);

impl Corpus {
    fn add(&mut self, target: &'static str, name: impl Into<String>, bytes: Vec<u8>) {
        if bytes.len() <= MAX_SEED {
            let name: String =
                name.into().chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
            self.0.entry(target).or_default().insert(name, bytes);
        }
    }

    fn count(&self, target: &str) -> usize {
        self.0.get(target).map_or(0, BTreeMap::len)
    }

    /// Leave out every target but `targets`.
    pub fn keep(&mut self, targets: &[&str]) {
        self.0.retain(|target, _| targets.contains(target));
    }

    /// Write every seed to `root/<target>/<name>`, replacing what was there.
    pub fn write(&self, root: &Path) -> std::io::Result<()> {
        for (target, seeds) in &self.0 {
            let dir = root.join(target);
            if dir.exists() {
                std::fs::remove_dir_all(&dir)?;
            }
            std::fs::create_dir_all(&dir)?;
            for (name, bytes) in seeds {
                std::fs::write(dir.join(name), bytes)?;
            }
        }
        Ok(())
    }
}

/// Every seed: zarrdb's own, then those found in `fixtures` (the Python scripts' output), if
/// given.
pub fn corpus(repo: &Path, fixtures: Option<&Path>) -> Corpus {
    let mut corpus = Corpus::default();
    codec_seeds(&mut corpus);
    shard_seeds(&mut corpus);
    log_seeds(&mut corpus);
    database_seeds(&mut corpus);
    history_seeds(&mut corpus);
    npy_seeds(&mut corpus);
    zip_seeds(&mut corpus);
    metadata_seeds(&mut corpus, &repo.join("tests/fixtures/metadata"));
    if let Some(fixtures) = fixtures {
        found_seeds(&mut corpus, fixtures);
    }
    corpus
}

/// Values that are not all fill, so that every chunk is stored.
fn values(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 / 5 + 1) as u8).collect()
}

/// The chunk `array` stores for `bytes` (C-order element bytes) written whole.
fn stored_chunk(store: &Arc<dyn Store>, array: &Array) -> Option<Vec<u8>> {
    let origin = vec![0; array.shape().len()];
    store.get(&array.chunk_key(&origin)).ok().flatten()
}

fn codec_seeds(corpus: &mut Corpus) {
    for which in 0..crate::codecs::CHAINS {
        for (t, p, r) in [(5u8, 1u8, 1u8), (11, 6, 0), (2, 3, 2), (0, 0, 0)] {
            let dims = [3u8, 4, 2];
            let header = [which, t, p, r];
            let Some((meta, _)) = crate::codecs::structured(header, &dims) else { continue };
            let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
            let Ok(array) = Array::create(store.clone(), "/", meta) else { continue };
            let shape = array.shape().to_vec();
            let origin = vec![0; shape.len()];
            let n = crate::elements(&shape).unwrap_or(0) as usize;
            let written = match array.data_type() {
                DataType::String => {
                    let items: Vec<String> = (0..n).map(|i| format!("s{i}é")).collect();
                    array.write_items(&origin, &shape, &items)
                }
                DataType::Bytes => {
                    let items: Vec<Vec<u8>> = (0..n).map(|i| vec![i as u8; i % 5]).collect();
                    array.write_items(&origin, &shape, &items)
                }
                DataType::Bool => array.write_region_bytes(&origin, &shape, &vec![1; n]),
                // Small values: every lossy filter and type cast keeps them meaningful.
                other => array.write_region_bytes(&origin, &shape, &small_values(&other, n)),
            };
            if written.is_err() {
                continue;
            }
            let Some(chunk) = stored_chunk(&store, &array) else { continue };
            let mut seed = header.to_vec();
            seed.extend_from_slice(&dims[..shape.len()]);
            seed.extend(chunk);
            corpus.add("codecs", format!("chain{which:02}-type{t}-p{p}-rank{}", shape.len()), seed);
        }
    }
}

/// `n` elements of `data_type` holding 1, 2, 3... (as little-endian bytes).
fn small_values(data_type: &DataType, n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let v = (i % 50 + 1) as u32;
        match data_type {
            DataType::Float16 => out.extend(half_bits(v as f32).to_le_bytes()),
            DataType::Float32 => out.extend((v as f32).to_le_bytes()),
            DataType::Float64 => out.extend(f64::from(v).to_le_bytes()),
            DataType::Complex64 => {
                out.extend((v as f32).to_le_bytes());
                out.extend((-(v as f32)).to_le_bytes());
            }
            DataType::Complex128 => {
                out.extend(f64::from(v).to_le_bytes());
                out.extend((-f64::from(v)).to_le_bytes());
            }
            other => {
                let mut bytes = vec![0; other.size()];
                bytes[0] = v as u8;
                out.extend(bytes);
            }
        }
    }
    out
}

/// An integer below 2048 as IEEE half-precision bits.
fn half_bits(v: f32) -> u16 {
    if v == 0.0 {
        return 0;
    }
    let exp = v.log2().floor() as i32;
    let mantissa = ((v / 2f32.powi(exp) - 1.0) * 1024.0) as u16;
    (((exp + 15) as u16) << 10) | mantissa
}

fn shard_seeds(corpus: &mut Corpus) {
    for c in (0..128u8).step_by(3) {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let array = Array::create(store.clone(), "/", crate::shard_index::metadata(c)).expect("valid sharding");
        let shape = array.shape().to_vec();
        let n = crate::elements(&shape).unwrap_or(0) as usize * array.data_type().size();
        let mut data = values(n);
        // Some inner chunks left as fill: absent from the index.
        if c % 2 == 0 {
            data[..n / 2].fill(0);
        }
        array.write_region_bytes(&vec![0; shape.len()], &shape, &data).expect("a shard is written");
        if let Some(shard) = stored_chunk(&store, &array) {
            let mut seed = vec![c];
            seed.extend(shard);
            corpus.add("shard_index", format!("config{c:03}"), seed);
        }
    }
}

fn log_seeds(corpus: &mut Corpus) {
    use zarrdb::fuzzing::commit_log_record as record;
    let chunk: &[u8] = &[1, 2, 3, 4];
    let doc: &[u8] = br#"{"zarr_format":3,"node_type":"group","attributes":{}}"#;
    let one = record(7, 1, &[], &[("a/zarr.json", Some(doc)), ("a/c/0", Some(chunk))]);
    let two = record(7, 2, &["b/"], &[("a/c/0", None), ("a/c/1", Some(&[9u8; 40][..]))]);
    let three = record(7, 3, &["", "a/c/"], &[]);
    let mut log = [one.clone(), two.clone(), three.clone()].concat();
    corpus.add("commit_log", "one-record", one.clone());
    corpus.add("commit_log", "three-records", log.clone());
    // A torn last record, and zeros after the records (the file is grown with zeros).
    corpus.add("commit_log", "torn-tail", log[..log.len() - 5].to_vec());
    log.extend(vec![0; 64]);
    corpus.add("commit_log", "zero-tail", log);
    // An older round's records after the current one's (lower sequence numbers), and a gap.
    corpus.add("commit_log", "older-round", [record(7, 5, &[], &[("k", Some(chunk))]), two.clone()].concat());
    corpus.add("commit_log", "gap", [one, record(7, 3, &[], &[("k", None)])].concat());
    corpus.add("commit_log", "other-database", [three, record(8, 4, &[], &[])].concat());
}

fn database_seeds(corpus: &mut Corpus) {
    let sequences: [(&str, u8, Vec<Op>); 5] = [
        (
            "create-write-commit-reopen",
            0,
            vec![
                Op::Create(0, [6, 5], [4, 2], 0),
                Op::Write(0, [1, 1], [3, 3], 10),
                Op::Read(0),
                Op::Commit,
                Op::Reopen,
            ],
        ),
        (
            "resize-append-abort",
            4,
            vec![
                Op::Create(1, [4, 4], [3, 3], 1),
                Op::Write(1, [0, 0], [4, 4], 1),
                Op::Commit,
                Op::Resize(1, [2, 6]),
                Op::Append(1, 0, 3, 7),
                Op::Read(1),
                Op::Abort,
                Op::Resize(1, [8, 3]),
                Op::Commit,
            ],
        ),
        (
            "sharded-rename-erase-lmdb",
            1,
            vec![
                Op::Create(2, [5, 7], [2, 4], 2),
                Op::Write(2, [1, 2], [4, 5], 3),
                Op::Commit,
                Op::Rename(2, 0),
                Op::SetGroup(4),
                Op::Commit,
                Op::Erase(0),
                Op::Create(2, [3, 3], [1, 1], 0),
                Op::EraseG,
                Op::Commit,
                Op::Reopen,
            ],
        ),
        (
            "sled",
            2,
            vec![
                Op::Create(0, [3, 3], [2, 2], 0),
                Op::Write(0, [0, 1], [3, 2], 5),
                Op::Commit,
                Op::Reopen,
                Op::Read(0),
            ],
        ),
        (
            "write-outside-and-create-twice",
            0,
            vec![
                Op::Create(0, [3, 3], [2, 2], 0),
                Op::Create(0, [1, 1], [1, 1], 0),
                Op::Write(0, [2, 2], [2, 2], 1),
                Op::Commit,
            ],
        ),
    ];
    for (name, config, ops) in sequences {
        let mut seed = vec![config];
        seed.extend(ops.iter().flat_map(Op::encode));
        corpus.add("database", name, seed);
    }
}

/// Damage to every record of a redb history (removed; a field changed, its checksum made to
/// hold again) and to the commit records and refs of the others; commit records moved to
/// another commit's key and written whole; and no damage at all.
fn history_seeds(corpus: &mut Corpus) {
    use crate::history::{records, Damage};
    for config in [0u8, 1, 2, 4, 5, 6] {
        let records = records(config);
        let prefix =
            format!("{}{}", crate::history::backend(config).name(), if config & 4 != 0 { "-collected" } else { "" });
        let mut add = |what: &str, key: u8, damage: Damage, bytes: &[u8]| {
            let name = format!("{prefix}-{what}-{}", records[usize::from(key)].0.trim_start_matches("__zarrdb/h/"));
            corpus.add("history", name, [&[config, key, damage.byte()][..], bytes].concat());
        };
        let commits: Vec<u8> =
            (0..records.len().min(128) as u8).filter(|&i| records[usize::from(i)].0.contains("/h/c/")).collect();
        for (i, (key, value)) in records.iter().enumerate().take(128) {
            let i = i as u8;
            let history = key.strip_prefix("__zarrdb/h/");
            let sealed = history.is_some_and(|k| !k.starts_with("o/") && !k.starts_with("b/"));
            let every = config & 3 == 0;
            if !every && !history.is_some_and(|k| k.starts_with("c/") || k.starts_with("r/") || k == "last") {
                continue;
            }
            // One chunk of the many stands for them all.
            if key.starts_with(crate::history::MANY) && !key.ends_with("/c/0") {
                continue;
            }
            add("removed", i, Damage::Remove, &[]);
            match sealed {
                // The first field after the kind: a commit's number, a ref's commit, the layout,
                // the count of a commit's changes.
                true => add("field", i, Damage::PatchSealed, &[4, 1]),
                // An entry's index and commit (at a Zarr key or a base record), an object's bytes.
                false => {
                    add("index", i, Damage::Patch, &[4, 1]);
                    add("commit", i, Damage::Patch, &[8, 1]);
                }
            }
            if key.contains("/h/c/") {
                // The parent, and the record of another commit in its place.
                add("parent", i, Damage::PatchSealed, &[12, 3]);
                let other = commits.iter().copied().find(|&c| c != i).unwrap_or(i);
                add("moved", i, Damage::Copy, &[other]);
                add("whole", i, Damage::Replace, value);
                add("body", i, Damage::Sealed, &value[..value.len() - 4]);
            }
            let field = |at: usize| u64::from_le_bytes(value[at..at + 8].try_into().expect("8 bytes"));
            // `ZHC2` and `ZHC3` records hold the merged commit at 20 (0 in a commit that merged
            // nothing).
            if (value.starts_with(b"ZHC2") || value.starts_with(b"ZHC3")) && field(20) != 0 {
                // A merge commit's merged commit made itself, and one newer than it.
                let (seq, merged) = (field(4), field(20));
                for (what, to) in [("merged-self", seq), ("merged-newer", seq + 1)] {
                    add(what, i, Damage::PatchSealed, &[&[20u8][..], &(merged ^ to).to_le_bytes()].concat());
                }
            }
        }
        // A key the database lacks (`history::made_key`), removed: no damage.
        corpus.add("history", format!("{prefix}-sound"), vec![config, 0xf8, Damage::Remove.byte()]);
        // A tag naming a commit there is not.
        corpus.add("history", format!("{prefix}-stray-tag"), {
            let mut seed = vec![config, 0x84, Damage::Sealed.byte()];
            seed.extend(b"ZHR1");
            seed.extend(999u64.to_le_bytes());
            seed
        });
    }
}

fn npy_seeds(corpus: &mut Corpus) {
    for (name, data_type, shape) in [
        ("int32-2d", DataType::Int32, vec![2u64, 3]),
        ("float64-scalar", DataType::Float64, vec![]),
        ("uint8-empty", DataType::UInt8, vec![0]),
        ("complex64", DataType::Complex64, vec![2]),
        ("bool-3d", DataType::Bool, vec![2, 1, 2]),
    ] {
        let header = NpyHeader::new(&data_type, &shape, "seed").expect("a supported type");
        let mut seed = header.to_bytes();
        let n = crate::elements(&shape).unwrap_or(0) as usize * data_type.size();
        seed.extend(if data_type == DataType::Bool { vec![1; n] } else { values(n) });
        corpus.add("npy", name, seed);
    }
}

fn zip_seeds(corpus: &mut Corpus) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let db = Database::create(dir.path().join("seed.zarrdb")).expect("a database");
    let mut attrs = serde_json::Map::new();
    attrs.insert("title".into(), "fuzz".into());
    Group::create(db.store(), "/g", attrs).expect("a group");
    let mut meta = ArrayMetadata::new(DataType::Int32, vec![8, 8], vec![4, 4]);
    meta.codecs = zarrdb::metadata::NamedConfig::parse_list(&serde_json::json!([
        {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}]))
    .expect("valid codecs");
    let a = Array::create(db.store(), "/g/a", meta).expect("an array");
    a.write_region(&[0, 0], &[8, 8], &(0..64).collect::<Vec<i32>>()).expect("a write");
    let b = Array::create(db.store(), "/b", ArrayMetadata::new(DataType::UInt8, vec![5], vec![5])).expect("an array");
    b.write_region(&[0], &[5], &[1u8, 2, 3, 4, 5]).expect("a write");
    for (name, node) in [("zarrdb-all", "/"), ("zarrdb-group", "/g"), ("zarrdb-array", "/b")] {
        let zip = dir.path().join(format!("{name}.zip"));
        db.export(&zip, &ExportOptions::default().node(node)).expect("an export");
        corpus.add("zip", name, std::fs::read(zip).expect("the export"));
    }
}

/// The metadata fixtures of `tests/fixtures/metadata` (v3 documents), and the v1 and 2020-draft
/// documents of the import tests.
fn metadata_seeds(corpus: &mut Corpus, fixtures: &Path) {
    for path in files(fixtures) {
        if path.extension().is_some_and(|e| e == "json") {
            let doc = std::fs::read(&path).expect("a fixture");
            corpus.add("metadata", format!("v3-{}", stem(&path)), [b"3".as_slice(), &doc].concat());
        }
    }
    let v1 = br#"{"zarr_format": 1, "shape": [4, 6], "chunks": [2, 3], "dtype": "<f8", "compression": "zlib",
        "compression_opts": 1, "fill_value": "NaN", "order": "C"}"#;
    corpus.add("metadata", "v1-zlib", [b"1".as_slice(), v1, b"\0{\"units\": \"m\"}"].concat());
    let draft = br#"{"shape": [10], "data_type": "<i4", "chunk_grid": {"type": "regular", "chunk_shape": [5],
        "separator": "/"}, "chunk_memory_layout": "C", "fill_value": 0, "extensions": [], "attributes": {"a": 1},
        "compressor": {"codec": "https://purl.org/zarr/spec/codec/gzip/1.0", "configuration": {"level": 1}}}"#;
    corpus.add("metadata", "draft-gzip", [b"d\0{\"attributes\": {}}\0".as_slice(), draft].concat());
}

/// Files under `dir`, sorted, depth first.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn stem(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

fn read_small(path: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::metadata(path).ok()?;
    (meta.len() as usize <= MAX_SEED).then(|| std::fs::read(path).ok()).flatten()
}

/// The Python scripts' output under `root`: metadata documents of each layout, array documents
/// with one of their chunks, zip archives and `.npy` files.
fn found_seeds(corpus: &mut Corpus, root: &Path) {
    for path in files(root) {
        let name = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned();
        let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let folder = path.parent().unwrap_or(root);
        let sibling = |n: &str| read_small(&folder.join(n)).unwrap_or_default();
        match file.as_str() {
            "zarr.json" if corpus.count("metadata") < MAX_FOUND * 2 || corpus.count("codecs") < MAX_FOUND * 3 => {
                let Some(doc) = read_small(&path) else { continue };
                let Ok(value) = serde_json::from_slice::<Value>(&doc) else { continue };
                if value.get("zarr_format").is_some_and(Value::is_string) {
                    // The 2020 draft's entry point: the whole hierarchy's documents follow.
                    let meta = |n: &str| read_small(&folder.join("meta").join(n)).unwrap_or_default();
                    let array = files(&folder.join("meta/root"))
                        .into_iter()
                        .find(|p| p.to_string_lossy().ends_with(".array.json"))
                        .and_then(|p| read_small(&p))
                        .unwrap_or_default();
                    let seed = [b"d".as_slice(), &doc, b"\0", &meta("root.group.json"), b"\0", &array].concat();
                    corpus.add("metadata", format!("draft-{name}"), seed);
                    continue;
                }
                if corpus.count("metadata") < MAX_FOUND * 2 {
                    corpus.add("metadata", format!("v3-{name}"), [b"3".as_slice(), &doc].concat());
                }
                if value.get("node_type").and_then(Value::as_str) == Some("array")
                    && corpus.count("codecs") < MAX_FOUND * 3
                {
                    // Everything below an array's document is its chunks (or shards).
                    let chunk = files(folder)
                        .into_iter()
                        .filter(|p| !p.ends_with("zarr.json"))
                        .find_map(|p| read_small(&p).filter(|c| !c.is_empty()));
                    if let Some(chunk) = chunk {
                        let seed = [&[crate::codecs::FREE][..], &doc, b"\0", &chunk].concat();
                        corpus.add("codecs", format!("found-{name}"), seed);
                    }
                }
            }
            ".zarray" if corpus.count("metadata") < MAX_FOUND * 3 => {
                let doc = sibling(".zarray");
                corpus.add(
                    "metadata",
                    format!("v2-{name}"),
                    [b"2".as_slice(), &doc, b"\0", &sibling(".zattrs")].concat(),
                );
            }
            ".zgroup" if corpus.count("metadata") < MAX_FOUND * 3 => {
                let child = files(folder)
                    .into_iter()
                    .find(|p| p.ends_with(".zarray"))
                    .and_then(|p| read_small(&p))
                    .unwrap_or_default();
                let seed = [
                    b"g".as_slice(),
                    &sibling(".zgroup"),
                    b"\0",
                    &sibling(".zattrs"),
                    b"\0",
                    &child,
                    b"\0",
                    &sibling(".zmetadata"),
                ]
                .concat();
                corpus.add("metadata", format!("v2group-{name}"), seed);
            }
            "meta" => {
                if let Some(doc) = read_small(&path) {
                    if doc.starts_with(b"{") {
                        corpus.add(
                            "metadata",
                            format!("v1-{name}"),
                            [b"1".as_slice(), &doc, b"\0", &sibling("attrs")].concat(),
                        );
                    }
                }
            }
            _ if file.ends_with(".zip") && corpus.count("zip") < MAX_FOUND => {
                if let Some(zip) = read_small(&path) {
                    corpus.add("zip", format!("found-{name}"), zip);
                }
            }
            _ if file.ends_with(".npy") && corpus.count("npy") < MAX_FOUND => {
                if let Some(npy) = read_small(&path) {
                    corpus.add("npy", format!("found-{name}"), npy);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::TARGETS;

    fn repo() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("fuzz/ is inside the repository")
    }

    /// Every committed seed goes through its target without a panic: the corpus stays valid
    /// input, and a seed that once crashed a target stays a regression test on stable.
    #[test]
    fn every_seed_passes_its_target() {
        let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
        for target in TARGETS {
            let run: fn(&[u8]) = match target {
                "codecs" => crate::codecs::run,
                "commit_log" => crate::commit_log::run,
                "database" => crate::database::run,
                "history" => crate::history::run,
                "metadata" => crate::metadata::run,
                "npy" => crate::npy::run,
                "shard_index" => crate::shard_index::run,
                _ => crate::zip::run,
            };
            let files = super::files(&seeds.join(target));
            assert!(files.len() >= 3, "{target}: {} seeds", files.len());
            for path in files {
                let input = std::fs::read(&path).expect("a seed");
                eprintln!("{target}: {}", path.display());
                run(&input);
            }
        }
    }

    /// Writes the seed corpus (ignored: run on purpose, see the module documentation).
    #[test]
    #[ignore = "writes fuzz/seeds/"]
    fn write_seeds() {
        let fixtures = std::env::var_os("ZARRDB_FUZZ_FIXTURES").map(std::path::PathBuf::from);
        let mut corpus = super::corpus(repo(), fixtures.as_deref());
        // A comma-separated list writes those targets' seeds alone: the others keep theirs (and
        // the seeds found in the fixtures, which this run may not have).
        if let Ok(only) = std::env::var("ZARRDB_FUZZ_SEED_TARGETS") {
            corpus.keep(&only.split(',').collect::<Vec<_>>());
        }
        for target in TARGETS {
            println!("{target}: {} seeds", corpus.count(target));
        }
        corpus.write(&repo().join("fuzz/seeds")).expect("the seeds are written");
    }
}
