//! Damaged stored values are refused with typed errors: never a panic, and never wrong data where
//! the format can tell (checksums, sizes, index ranges).
//!
//! Acceptance: "Corruption tests: flipped bytes under crc32c, in a shard index and in compressed
//! streams, truncated values, streams that decompress to the wrong size, a zstd bomb: typed
//! errors; `zarrdb check` reports each and exits non-zero."
//!
//! Every case builds a small array in a directory store, writes data, damages one stored chunk
//! value directly on disk (as a bad disk, a torn copy or a hostile file would), and then demands
//! three things:
//!   (a) `read_region_bytes` over the damaged chunk returns `Error::Codec` for that key with the
//!       expected `CodecError` variant, inside `catch_unwind` to prove that nothing panics;
//!   (b) `Array::check` lists the key among the corrupt chunks (and only that key);
//!   (c) the `zarrdb check` binary exits with status 1 (a problem, not success and not a panic's
//!       101), prints a `PROBLEM` line naming the key, and writes exactly one line to stderr.
//!
//! Run with `--nocapture` to see the error each case produced.
//!
//! `partial_read_refuses_an_entry_inside_the_index` guards a bug this file found: the partial-read
//! path of `sharding_indexed` once skipped the index range checks; see its comment.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use zarrdb::error::{CodecError, StoreError};
use zarrdb::metadata::NamedConfig;
use zarrdb::{Array, ArrayMetadata, DataType, DirectoryStore, Error, Group, Store};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn codecs(list: Value) -> Vec<NamedConfig> {
    NamedConfig::parse_list(&list).expect("a valid codec list")
}

fn bytes_le() -> Value {
    json!({"name": "bytes", "configuration": {"endian": "little"}})
}

/// Deterministic data that compresses but is not trivial, so compressed streams hold real
/// entropy-coded content to damage.
fn data(n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| {
            let x = i / 2;
            if i % 2 == 0 {
                ((x * 5 / 3) % 256) as u8 ^ ((x * 7919) % 7) as u8
            } else {
                (x / 700) as u8
            }
        })
        .collect()
}

/// An array `/a` (under a root group, so `zarrdb check` walks to it) in a directory store in a
/// fresh temporary folder, every chunk written with non-fill data.
struct Fixture {
    dir: tempfile::TempDir,
    store: Arc<dyn Store>,
    array: Array,
}

impl Fixture {
    fn new(data_type: DataType, shape: &[u64], chunks: &[u64], chain: Value) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(DirectoryStore::open(dir.path()).unwrap());
        Group::create(store.clone(), "/", Map::new()).unwrap();
        let mut meta = ArrayMetadata::new(data_type.clone(), shape.to_vec(), chunks.to_vec());
        meta.codecs = codecs(chain);
        let array = Array::create(store.clone(), "/a", meta).unwrap();
        let n = shape.iter().product::<u64>() as usize * data_type.size();
        array.write_region_bytes(&vec![0; shape.len()], shape, &data(n)).unwrap();
        Fixture { dir, store, array }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.path().join(key)
    }

    /// The stored value, read straight from the file.
    fn stored(&self, key: &str) -> Vec<u8> {
        std::fs::read(self.path(key)).unwrap_or_else(|e| panic!("{key}: {e}"))
    }

    /// Overwrite the stored value behind the library's back.
    fn replace(&self, key: &str, value: &[u8]) {
        std::fs::write(self.path(key), value).unwrap();
    }

    fn damage(&self, key: &str, f: impl FnOnce(&mut Vec<u8>)) {
        let mut value = self.stored(key);
        f(&mut value);
        self.replace(key, &value);
    }

    /// A fresh handle: nothing read before the damage can be cached.
    fn reopen(&self) -> Array {
        Array::open(self.store.clone(), "/a").unwrap()
    }

    /// Offset and shape of the whole chunk at `coords` (the fixtures have no edge chunks).
    fn chunk_region(&self, coords: &[u64]) -> (Vec<u64>, Vec<u64>) {
        let chunk = self.array.chunk_shape();
        (coords.iter().zip(chunk).map(|(c, s)| c * s).collect(), chunk.to_vec())
    }
}

fn kind(e: &CodecError) -> &'static str {
    match e {
        CodecError::ChecksumMismatch { .. } => "ChecksumMismatch",
        CodecError::Corrupt { .. } => "Corrupt",
        CodecError::TooLarge { .. } => "TooLarge",
        CodecError::SizeMismatch { .. } => "SizeMismatch",
        CodecError::StoredTooLarge { .. } => "StoredTooLarge",
        _ => "other codec error",
    }
}

/// A read's result as a short label: `Codec(<variant>)` for a codec error naming `key`,
/// `Store(RangeOutOfBounds)` for an out-of-range fetch of `key`, `Ok`, `panic`, or a description
/// of anything else. The full error is printed (visible with `--nocapture`).
fn outcome(case: &str, key: &str, read: impl FnOnce() -> Result<Vec<u8>, Error>) -> String {
    match catch_unwind(AssertUnwindSafe(read)) {
        Err(_) => "panic".into(),
        Ok(Ok(_)) => "Ok".into(),
        Ok(Err(e)) => {
            eprintln!("{case}: {e}");
            match &e {
                Error::Codec { key: k, source } if k == key => format!("Codec({})", kind(source)),
                Error::Store(StoreError::RangeOutOfBounds { key: k, .. }) if k == key => {
                    "Store(RangeOutOfBounds)".into()
                }
                other => format!("unexpected error: {other:?}"),
            }
        }
    }
}

/// (a) + (b) + (c) for the damaged chunk `coords`: returns the observed `CodecError` variant.
fn assert_detected(case: &str, fx: &Fixture, coords: &[u64], accepted: &[&str]) -> String {
    let key = fx.array.chunk_key(coords);
    let accepted: Vec<String> = accepted.iter().map(|k| format!("Codec({k})")).collect();
    let array = fx.reopen();

    // (a) A read of the whole damaged chunk.
    let (off, shape) = fx.chunk_region(coords);
    let got = outcome(case, &key, || array.read_region_bytes(&off, &shape));
    assert!(accepted.contains(&got), "{case}: read gave {got}, expected one of {accepted:?}");

    // (b) Array::check names the key, with the same kind of error, and nothing else.
    let report = catch_unwind(AssertUnwindSafe(|| array.check()))
        .unwrap_or_else(|_| panic!("{case}: Array::check panicked"))
        .unwrap_or_else(|e| panic!("{case}: Array::check failed: {e}"));
    let listed: Vec<String> = report
        .corrupt
        .iter()
        .map(|(k, e)| match e {
            Error::Codec { source, .. } => format!("{k} Codec({})", kind(source)),
            other => format!("{k} {other}"),
        })
        .collect();
    assert_eq!(listed.len(), 1, "{case}: check lists {listed:?}");
    assert!(
        accepted.iter().any(|a| listed[0] == format!("{key} {a}")),
        "{case}: check lists {listed:?}, expected {key} with one of {accepted:?}"
    );
    assert!(!report.is_ok());

    // (c) The command line.
    assert_cli_reports(case, fx, &key);
    got.trim_start_matches("Codec(").trim_end_matches(')').to_owned()
}

/// `zarrdb check DIR`: exit status 1, exactly one PROBLEM line and it names `key`, one stderr line.
fn assert_cli_reports(case: &str, fx: &Fixture, key: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_zarrdb")).arg("check").arg(fx.dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{case}: zarrdb check status\nstdout:\n{stdout}\nstderr:\n{stderr}");
    let problems: Vec<&str> = stdout.lines().filter(|l| l.starts_with("PROBLEM")).collect();
    assert_eq!(problems.len(), 1, "{case}: one problem expected\n{stdout}");
    assert!(problems[0].contains(&format!("{key}:")), "{case}: the PROBLEM line does not name {key}: {}", problems[0]);
    assert_eq!(stderr.lines().count(), 1, "{case}: stderr must be one line:\n{stderr}");
    assert!(stdout.contains(": 1 problem\n"), "{case}: summary line\n{stdout}");
}

/// `body` followed by its valid CRC-32C, as the crc32c codec stores it.
fn with_crc(body: &[u8]) -> Vec<u8> {
    let mut v = body.to_vec();
    v.extend_from_slice(&crc32c::crc32c(body).to_le_bytes());
    v
}

/// A valid gzip stream of `decoded`.
fn gzip(decoded: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(5));
    e.write_all(decoded).unwrap();
    e.finish().unwrap()
}

/// A valid zstd frame of `decoded` (the bulk API records the content size in the header).
fn zstd_frame(decoded: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(decoded, 3).unwrap()
}

/// A valid zstd frame of `decoded` without the content size in its header (streaming encoder, size
/// never pledged): the decoder cannot refuse it up front and must bound its output.
fn zstd_frame_unsized(decoded: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    e.include_contentsize(false).unwrap();
    e.write_all(decoded).unwrap();
    let frame = e.finish().unwrap();
    assert_eq!(zstd::zstd_safe::get_frame_content_size(&frame).unwrap(), None);
    frame
}

/// The layout of the test shards' index: 16 inner chunks, entries (offset, nbytes) as
/// little-endian u64, optionally followed by a CRC-32C; at the start or the end of the shard.
#[derive(Clone, Copy, Debug)]
struct IndexLayout {
    at_start: bool,
    crc: bool,
}

const INNER_PER_SHARD: usize = 16;

impl IndexLayout {
    fn all() -> [IndexLayout; 4] {
        [
            IndexLayout { at_start: false, crc: true },
            IndexLayout { at_start: true, crc: true },
            IndexLayout { at_start: false, crc: false },
            IndexLayout { at_start: true, crc: false },
        ]
    }

    fn len(&self) -> usize {
        INNER_PER_SHARD * 16 + if self.crc { 4 } else { 0 }
    }

    fn range(&self, shard_len: usize) -> std::ops::Range<usize> {
        if self.at_start {
            0..self.len()
        } else {
            shard_len - self.len()..shard_len
        }
    }

    fn entries(&self, shard: &[u8]) -> Vec<(u64, u64)> {
        let index = &shard[self.range(shard.len())];
        index[..INNER_PER_SHARD * 16]
            .chunks_exact(16)
            .map(|e| (u64::from_le_bytes(e[..8].try_into().unwrap()), u64::from_le_bytes(e[8..].try_into().unwrap())))
            .collect()
    }

    /// Replace the index with `entries`, re-encoded, with a valid checksum when the layout has one:
    /// the lie must get past the CRC to reach the index validation.
    fn forge(&self, shard: &mut [u8], entries: &[(u64, u64)]) {
        let mut index: Vec<u8> =
            entries.iter().flat_map(|(o, n)| o.to_le_bytes().into_iter().chain(n.to_le_bytes())).collect();
        if self.crc {
            index = with_crc(&index);
        }
        let range = self.range(shard.len());
        shard[range].copy_from_slice(&index);
    }

    /// An array [32, 16] uint32 of two shards [16, 16], inner chunks [4, 4] stored raw (64 bytes).
    fn fixture(&self) -> Fixture {
        let mut index_codecs = vec![bytes_le()];
        if self.crc {
            index_codecs.push(json!({"name": "crc32c"}));
        }
        let chain = json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [4, 4],
            "codecs": [bytes_le()],
            "index_codecs": index_codecs,
            "index_location": if self.at_start { "start" } else { "end" }}}]);
        Fixture::new(DataType::UInt32, &[32, 16], &[16, 16], chain)
    }
}

/// The largest valid inner chunk of the shard fixtures: 4 x 4 uint32 stored raw.
const INNER_BYTES: u64 = 64;

/// Peak resident memory of this process (Linux), to show a bomb was never inflated.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

// ---------------------------------------------------------------------------------------------
// 1. crc32c
// ---------------------------------------------------------------------------------------------

/// Chunks are 8 x 8 uint16 = 128 bytes plus a 4-byte CRC-32C. The checksum must catch any flipped
/// byte, in the data or in the checksum itself; values too short to hold a checksum are corrupt;
/// a truncated value with a valid checksum over the rest still has the wrong size.
#[test]
fn crc32c_detects_flips_and_truncation() {
    let make = || Fixture::new(DataType::UInt16, &[16, 16], &[8, 8], json!([bytes_le(), {"name": "crc32c"}]));
    type Damage = fn(&mut Vec<u8>);
    let cases: [(&str, Damage, &[&str]); 8] = [
        ("flip a data byte", |v| v[50] ^= 0x01, &["ChecksumMismatch"]),
        ("flip the first byte", |v| v[0] ^= 0xff, &["ChecksumMismatch"]),
        (
            "flip a checksum byte",
            |v| {
                let n = v.len();
                v[n - 2] ^= 0x80
            },
            &["ChecksumMismatch"],
        ),
        ("truncate to 3 bytes", |v| v.truncate(3), &["Corrupt"]),
        ("empty value", |v| v.clear(), &["Corrupt"]),
        ("truncate to 64 bytes", |v| v.truncate(64), &["ChecksumMismatch"]),
        // Shorter data under a checksum that matches it: the bytes codec sees the wrong size.
        ("truncate, re-checksum", |v| *v = with_crc(&v[..64]), &["SizeMismatch"]),
        // Longer than any valid chunk under a matching checksum: refused before anything else.
        ("extend, re-checksum", |v| *v = with_crc(&[&v[..128], &[7u8; 10][..]].concat()), &["StoredTooLarge"]),
    ];
    for (name, damage, accepted) in cases {
        let fx = make();
        fx.damage(&fx.array.chunk_key(&[0, 1]), damage);
        let got = assert_detected(&format!("crc32c: {name}"), &fx, &[0, 1], accepted);
        eprintln!("crc32c: {name}: {got}");
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Shard index
// ---------------------------------------------------------------------------------------------

/// The partial-read path (a region inside one inner chunk) parses the index on its own, without
/// the shard's length, so it is checked separately: it must fail too, never return data.
fn partial_read_outcome(case: &str, fx: &Fixture, coords: &[u64]) -> String {
    let key = fx.array.chunk_key(coords);
    let array = fx.reopen();
    let (off, _) = fx.chunk_region(coords);
    // Two elements of inner chunk 0 (the one every forged entry below rewrites).
    outcome(case, &key, || array.read_region_bytes(&off, &[1, 2]))
}

/// A flipped byte in a CRC-protected index is a checksum mismatch, for both locations and both
/// read paths.
#[test]
fn shard_index_flip_is_a_checksum_mismatch() {
    for layout in IndexLayout::all().into_iter().filter(|l| l.crc) {
        for at in [0, 17, INNER_PER_SHARD * 16 - 1, INNER_PER_SHARD * 16 + 2] {
            let case = format!("{layout:?}: flip index byte {at}");
            let fx = layout.fixture();
            fx.damage(&fx.array.chunk_key(&[1, 0]), |v| {
                let start = layout.range(v.len()).start;
                v[start + at] ^= 0x10;
            });
            assert_eq!(partial_read_outcome(&case, &fx, &[1, 0]), "Codec(ChecksumMismatch)", "{case}: partial read");
            assert_detected(&case, &fx, &[1, 0], &["ChecksumMismatch"]);
        }
    }
}

/// A forged index (valid checksum where there is one) that lies about where inner chunks are.
/// Each lie must be refused as `Corrupt` by the whole-shard decode; the partial-read path must
/// refuse it too (see `PARTIAL_READ_*` below for what is accepted there).
#[test]
fn forged_shard_indexes_are_corrupt() {
    // What the partial-read path may answer for a lie it cannot detect without the shard's length
    // (an entry past the end): the store refuses the out-of-range fetch, naming the key. A typed
    // error, though not the codec's. Everything else must be a codec error.
    const PARTIAL_READ_CORRUPT: &[&str] = &["Codec(Corrupt)"];
    // Empty: the partial path is asserted by its own test.
    const PARTIAL_READ_SEPARATE: &[&str] = &[];
    type Forge = fn(IndexLayout, usize, &mut Vec<(u64, u64)>);
    let cases: [(&str, Forge, &[&str]); 6] = [
        ("entry past the end", |_, len, e| e[0] = (len as u64 + 64, INNER_BYTES), PARTIAL_READ_CORRUPT),
        // With the index at the end this entry also overlaps the index; either way it ends past
        // the end of the shard.
        ("entry straddling the end", |_, len, e| e[0] = (len as u64 - 10, INNER_BYTES), PARTIAL_READ_CORRUPT),
        ("two entries overlapping", |_, _, e| e[1] = (e[0].0 + 32, INNER_BYTES), PARTIAL_READ_CORRUPT),
        // Inner chunk 0 moved inside the index; its own slot is left unused, so it overlaps nothing
        // but the index. The whole decode refuses it; the partial path is covered by
        // `partial_read_refuses_an_entry_inside_the_index`.
        ("entry inside the index", |l, len, e| e[0] = (l.range(len).start as u64, INNER_BYTES), PARTIAL_READ_SEPARATE),
        ("offset + nbytes overflows u64", |_, _, e| e[0] = (u64::MAX - 10, INNER_BYTES), PARTIAL_READ_CORRUPT),
        ("nbytes larger than any inner chunk", |_, _, e| e[0] = (e[0].0, 1 << 40), PARTIAL_READ_CORRUPT),
    ];
    for layout in IndexLayout::all() {
        for (name, forge, partial_accepted) in cases {
            let case = format!("{layout:?}: {name}");
            let fx = layout.fixture();
            fx.damage(&fx.array.chunk_key(&[1, 0]), |v| {
                let mut entries = layout.entries(v);
                forge(layout, v.len(), &mut entries);
                layout.forge(v, &entries);
            });
            if !partial_accepted.is_empty() {
                let got = partial_read_outcome(&case, &fx, &[1, 0]);
                assert!(
                    partial_accepted.contains(&got.as_str()),
                    "{case}: partial read gave {got}, expected {partial_accepted:?}"
                );
            }
            assert_detected(&case, &fx, &[1, 0], &["Corrupt"]);
        }
    }
}

/// Regression: an index entry that points into the index itself must be refused by partial reads
/// too. `partial_decode` once checked entries without the shard's length, so a read of part of
/// that inner chunk returned the index's own bytes as array data, silently. Partial reads now ask
/// the store for the value's size and check the index exactly as a whole read does.
#[test]
fn partial_read_refuses_an_entry_inside_the_index() {
    let mut failures = Vec::new();
    for layout in IndexLayout::all() {
        let case = format!("{layout:?}: entry inside the index, partial read");
        let fx = layout.fixture();
        fx.damage(&fx.array.chunk_key(&[1, 0]), |v| {
            let mut entries = layout.entries(v);
            entries[0] = (layout.range(v.len()).start as u64, INNER_BYTES);
            layout.forge(v, &entries);
        });
        let got = partial_read_outcome(&case, &fx, &[1, 0]);
        if got != "Codec(Corrupt)" {
            failures.push(format!("{case}: {got}"));
        }
    }
    assert!(failures.is_empty(), "a lying index entry is accepted by partial reads:\n{}", failures.join("\n"));
}

/// A shard shorter than its own index: corrupt for the whole decode. The partial path asks the
/// store for the index range, which the store refuses (out of range, naming the key).
#[test]
fn truncated_shards_are_corrupt() {
    for layout in IndexLayout::all() {
        for keep in [0, 10, layout.len() - 1] {
            let case = format!("{layout:?}: shard truncated to {keep} bytes");
            let fx = layout.fixture();
            fx.damage(&fx.array.chunk_key(&[1, 0]), |v| v.truncate(keep));
            let got = partial_read_outcome(&case, &fx, &[1, 0]);
            assert!(
                ["Codec(Corrupt)", "Store(RangeOutOfBounds)"].contains(&got.as_str()),
                "{case}: partial read gave {got}"
            );
            assert_detected(&case, &fx, &[1, 0], &["Corrupt"]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Compressed streams
// ---------------------------------------------------------------------------------------------

/// uint16 [64, 64] in chunks of [32, 32] (2048 bytes decoded) under each compressor.
fn compressed_chains() -> Vec<(&'static str, Value)> {
    vec![
        ("gzip", json!([bytes_le(), {"name": "gzip", "configuration": {"level": 5}}])),
        ("zstd", json!([bytes_le(), {"name": "zstd", "configuration": {"level": 3, "checksum": false}}])),
        ("zstd+checksum", json!([bytes_le(), {"name": "zstd", "configuration": {"level": 3, "checksum": true}}])),
        (
            "blosc lz4",
            json!([bytes_le(), {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2}}]),
        ),
        (
            "blosc zstd",
            json!([bytes_le(), {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "bitshuffle", "typesize": 2}}]),
        ),
    ]
}

fn compressed_fixture(chain: &Value) -> Fixture {
    Fixture::new(DataType::UInt16, &[64, 64], &[32, 32], chain.clone())
}

/// Whether a compressor's stream carries a checksum of the decoded data: gzip always (CRC-32 and
/// length trailer), zstd when configured. zstd without `checksum` and Blosc 1 do not, so a flip
/// inside a literal run decodes to other values of the right size, undetectably by any reader;
/// that is what the `crc32c` codec is for.
fn has_checksum(name: &str) -> bool {
    name == "gzip" || name == "zstd+checksum"
}

/// Every single-byte flip of a stored chunk, decoded in memory with `Array::decode_chunk`: never a
/// panic, never an untyped error, and for checksummed streams never wrong data. For the others
/// the count of undetectable flips is printed.
#[test]
fn every_single_byte_flip_is_typed_and_checksummed_streams_catch_all() {
    let mut chains = compressed_chains();
    chains.push(("crc32c", json!([bytes_le(), {"name": "crc32c"}])));
    chains.push((
        "zstd+crc32c",
        json!([bytes_le(), {"name": "zstd", "configuration": {"level": 3}}, {"name": "crc32c"}]),
    ));
    for (name, chain) in chains {
        let fx = compressed_fixture(&chain);
        let stored = fx.stored(&fx.array.chunk_key(&[1, 1]));
        let good = fx.array.decode_chunk(stored.clone()).unwrap();
        let mut tally = std::collections::BTreeMap::<String, usize>::new();
        for at in 0..stored.len() {
            let mut v = stored.clone();
            v[at] ^= 0x5a;
            let label = match catch_unwind(AssertUnwindSafe(|| fx.array.decode_chunk(v))) {
                Err(_) => panic!("{name}: flip at {at} panicked"),
                Ok(Ok(d)) if d == good => "unchanged".to_owned(),
                Ok(Ok(_)) => "WRONG DATA".to_owned(),
                Ok(Err(Error::Codec { source, .. })) => kind(&source).to_owned(),
                Ok(Err(e)) => panic!("{name}: flip at {at}: not a codec error: {e}"),
            };
            assert_ne!(label, "other codec error", "{name}: flip at {at}");
            *tally.entry(label).or_default() += 1;
        }
        eprintln!("{name}: {} single-byte flips: {tally:?}", stored.len());
        if has_checksum(name) || name.ends_with("crc32c") {
            assert!(!tally.contains_key("WRONG DATA"), "{name}: a flip went undetected: {tally:?}");
        }
    }
}

/// Flipped bytes inside a stored stream, end to end (read, `Array::check`, `zarrdb check`).
/// Checksummed streams: a run of 8 flipped bytes in the middle. Unchecksummed ones can only notice
/// damage that breaks the stream's structure, so for them the whole back half is flipped, where
/// zstd keeps a block's entropy-coded sequences and LZ4 its match tokens up to the end marker.
/// Accepted: Corrupt, ChecksumMismatch, or TooLarge (damaged deflate or zstd data that expands
/// past the chunk's size is stopped at the bound).
#[test]
fn flipped_bytes_in_compressed_streams_are_detected() {
    for (name, chain) in compressed_chains() {
        let fx = compressed_fixture(&chain);
        let key = fx.array.chunk_key(&[1, 1]);
        fx.damage(&key, |v| {
            let mid = v.len() / 2;
            let run = if has_checksum(name) { mid..mid + 8 } else { mid..v.len() };
            for b in &mut v[run] {
                *b ^= 0x5a;
            }
        });
        let accepted = ["Corrupt", "ChecksumMismatch", "TooLarge"];
        let got = assert_detected(&format!("{name}: flipped bytes"), &fx, &[1, 1], &accepted);
        eprintln!("{name}: flipped bytes: {got}");
    }
}

/// Truncated streams: cut in half, and missing only the last byte (a trailer or checksum byte).
#[test]
fn truncated_compressed_streams_are_corrupt() {
    for (name, chain) in compressed_chains() {
        for cut in ["half", "last byte"] {
            let fx = compressed_fixture(&chain);
            fx.damage(&fx.array.chunk_key(&[0, 1]), |v| {
                let keep = if cut == "half" { v.len() / 2 } else { v.len() - 1 };
                v.truncate(keep);
            });
            assert_detected(&format!("{name}: truncated ({cut})"), &fx, &[0, 1], &["Corrupt"]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Valid streams of the wrong decoded size
// ---------------------------------------------------------------------------------------------

/// Valid gzip, zstd and Blosc streams that decode to fewer or more bytes than a chunk holds
/// (2048), and raw chunks of the wrong length. Shorter: the bytes codec sees the wrong size
/// (SizeMismatch). Longer: the decompressor is bounded by what the next stage can consume and
/// stops at the limit (TooLarge) without producing the rest.
#[test]
fn streams_of_the_wrong_decoded_size_are_refused() {
    const CHUNK: usize = 32 * 32 * 2;
    let short = data(CHUNK - 2);
    let long = data(CHUNK + 2);
    let huge = data(CHUNK * 64);
    let chains = compressed_chains();
    let chain = |name: &str| chains.iter().find(|(n, _)| *n == name).unwrap().1.clone();
    // A valid Blosc stream of another length, from the library's own encoder: the same chain on
    // an array whose chunks are 32 x `cols`.
    let blosc = |cols: u64| {
        let store: Arc<dyn Store> = Arc::new(zarrdb::MemoryStore::new());
        let mut meta = ArrayMetadata::new(DataType::UInt16, vec![32, cols], vec![32, cols]);
        meta.codecs = codecs(chain("blosc lz4"));
        let scratch = Array::create(store, "/s", meta).unwrap();
        scratch.encode_chunk(&data(32 * cols as usize * 2)).unwrap()
    };
    let cases: Vec<(&str, Value, Vec<u8>, &[&str])> = vec![
        ("gzip shorter", chain("gzip"), gzip(&short), &["SizeMismatch"]),
        ("gzip longer", chain("gzip"), gzip(&long), &["TooLarge"]),
        ("gzip much longer", chain("gzip"), gzip(&huge), &["TooLarge"]),
        ("gzip empty", chain("gzip"), gzip(&[]), &["SizeMismatch"]),
        ("zstd shorter", chain("zstd"), zstd_frame(&short), &["SizeMismatch"]),
        ("zstd longer", chain("zstd"), zstd_frame(&long), &["TooLarge"]),
        ("zstd much longer", chain("zstd"), zstd_frame(&huge), &["TooLarge"]),
        ("zstd shorter, no size in header", chain("zstd"), zstd_frame_unsized(&short), &["SizeMismatch"]),
        ("zstd longer, no size in header", chain("zstd"), zstd_frame_unsized(&long), &["TooLarge"]),
        ("blosc shorter", chain("blosc lz4"), blosc(31), &["SizeMismatch"]),
        ("blosc longer", chain("blosc lz4"), blosc(33), &["TooLarge"]),
        ("blosc much longer", chain("blosc lz4"), blosc(32 * 64), &["TooLarge"]),
        ("raw shorter", json!([bytes_le()]), short.clone(), &["SizeMismatch"]),
        ("raw longer", json!([bytes_le()]), long.clone(), &["StoredTooLarge"]),
        ("raw empty", json!([bytes_le()]), Vec::new(), &["SizeMismatch"]),
    ];
    for (name, chain, value, accepted) in cases {
        let fx = compressed_fixture(&chain);
        fx.replace(&fx.array.chunk_key(&[1, 0]), &value);
        let got = assert_detected(name, &fx, &[1, 0], accepted);
        eprintln!("{name}: {got}");
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Decompression bombs
// ---------------------------------------------------------------------------------------------

/// 200 MB of zeros, fed to the encoder 1 MiB at a time so the test never holds it.
const BOMB_SIZE: u64 = 200_000_000;

fn feed_zeros(w: &mut impl std::io::Write) {
    let block = vec![0u8; 1 << 20];
    let mut left = BOMB_SIZE;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        w.write_all(&block[..n]).unwrap();
        left -= n as u64;
    }
}

/// A zstd frame of `BOMB_SIZE` zeros, with or without the content size in its header.
fn zstd_bomb(declare_size: bool) -> Vec<u8> {
    let mut e = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
    if declare_size {
        e.set_pledged_src_size(Some(BOMB_SIZE)).unwrap();
        e.include_contentsize(true).unwrap();
    } else {
        e.include_contentsize(false).unwrap();
    }
    feed_zeros(&mut e);
    let frame = e.finish().unwrap();
    let declared = zstd::zstd_safe::get_frame_content_size(&frame).unwrap();
    assert_eq!(declared, declare_size.then_some(BOMB_SIZE), "the frame header is what the case needs");
    frame
}

fn gzip_bomb() -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    feed_zeros(&mut e);
    e.finish().unwrap()
}

/// A few-KB value that inflates to 200 MB replaces a 64 KiB chunk: the decoder must stop at the
/// chunk's bound (TooLarge) quickly and without allocating the bomb. The frame without a declared
/// content size cannot be refused from its header; zstd must stop when the bounded output buffer
/// is full.
#[test]
fn decompression_bombs_are_refused_quickly() {
    let zstd_chain = json!([bytes_le(), {"name": "zstd", "configuration": {"level": 1}}]);
    let gzip_chain = json!([bytes_le(), {"name": "gzip", "configuration": {"level": 1}}]);
    type Bomb = fn() -> Vec<u8>;
    let cases: [(&str, Value, Bomb, &[&str]); 3] = [
        ("zstd bomb, size in header", zstd_chain.clone(), || zstd_bomb(true), &["TooLarge"]),
        // The brief allows TooLarge or Corrupt here; the observed variant is printed.
        ("zstd bomb, no size in header", zstd_chain, || zstd_bomb(false), &["TooLarge", "Corrupt"]),
        ("gzip bomb", gzip_chain, gzip_bomb, &["TooLarge"]),
    ];
    for (name, chain, bomb, accepted) in cases {
        // float32 [256, 128] in chunks of [128, 128]: 64 KiB per chunk.
        let fx = Fixture::new(DataType::Float32, &[256, 128], &[128, 128], chain);
        let built = Instant::now();
        let value = bomb();
        let build_time = built.elapsed();
        fx.replace(&fx.array.chunk_key(&[1, 0]), &value);
        let start = Instant::now();
        let got = assert_detected(name, &fx, &[1, 0], accepted);
        let detect_time = start.elapsed();
        eprintln!(
            "{name}: {} bytes on disk (built in {build_time:?}); {got} in {detect_time:?} (read + check + CLI)",
            value.len()
        );
        // Inflating 200 MB with a bounded buffer is impossible in this time on any machine this
        // runs on; refusing from the first 64 KiB is instant.
        assert!(detect_time < Duration::from_secs(5), "{name}: took {detect_time:?}");
    }
    // The bomb was never inflated in this process: its peak memory stayed far below 200 MB.
    if let Some(peak) = peak_rss() {
        eprintln!("peak RSS {} MiB", peak >> 20);
        assert!(peak < 160 << 20, "peak RSS {} MiB: a bomb was inflated?", peak >> 20);
    }
}
