//! Partial reads of sharded arrays fetch only what they need.
//!
//! Acceptance: "A test counts the bytes fetched from the store: reading one inner chunk of a shard
//! fetches at most the index plus that inner chunk."
//!
//! The store is wrapped in a counting store that delegates every method to a `MemoryStore` and
//! counts, separately, the bytes returned by `get` (whole values) and by `get_partial_values`
//! (byte ranges). The expected bound for each read is computed independently of the library: the
//! test parses the shard index itself from the full stored shard, so a reader that fetched a
//! neighbouring inner chunk, the whole shard, or a bigger range than the index entry says would
//! exceed the bound.
//!
//! The array mirrors the `sharded` benchmark workload at a smaller size: float32 [256, 256],
//! shards [128, 128] (2 x 2 shards), inner chunks [16, 16] (8 x 8 per shard), inner codecs
//! bytes + zstd(1), index codecs bytes + crc32c; both index locations.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use zarrdb::store::Sealed;

use serde_json::{json, Value};
use zarrdb::error::StoreError;
use zarrdb::metadata::NamedConfig;
use zarrdb::store::{ByteRange, DirListing, ListableStore, ReadableStore, StoreCapabilities, WritableStore};
use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const SHAPE: [u64; 2] = [256, 256];
const SHARD: [u64; 2] = [128, 128];
const INNER: [u64; 2] = [16, 16];
/// Inner chunks per shard along each dimension.
const PER_SHARD: u64 = SHARD[0] / INNER[0];
/// 16 bytes (offset, nbytes) per inner chunk, plus the 4-byte CRC-32C of the index codec chain.
const INDEX_SIZE: u64 = 16 * PER_SHARD * PER_SHARD + 4;
const ELEM: usize = 4;

/// What the counting store saw since the last reset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    get_calls: u64,
    get_bytes: u64,
    partial_calls: u64,
    /// Byte ranges requested through `get_partial_values` (over all calls).
    partial_ranges: u64,
    partial_bytes: u64,
}

/// A store that delegates everything to a `MemoryStore` and counts what reads return. Every
/// method is delegated explicitly (including the ones with default implementations), so the
/// counts reflect exactly the calls the array makes and the memory store's own range slicing is
/// what gets measured.
#[derive(Default)]
struct CountingStore {
    inner: MemoryStore,
    get_calls: AtomicU64,
    get_bytes: AtomicU64,
    partial_calls: AtomicU64,
    partial_ranges: AtomicU64,
    partial_bytes: AtomicU64,
}

impl CountingStore {
    fn reset(&self) {
        for c in [&self.get_calls, &self.get_bytes, &self.partial_calls, &self.partial_ranges, &self.partial_bytes] {
            c.store(0, Ordering::SeqCst);
        }
    }

    fn counts(&self) -> Counts {
        Counts {
            get_calls: self.get_calls.load(Ordering::SeqCst),
            get_bytes: self.get_bytes.load(Ordering::SeqCst),
            partial_calls: self.partial_calls.load(Ordering::SeqCst),
            partial_ranges: self.partial_ranges.load(Ordering::SeqCst),
            partial_bytes: self.partial_bytes.load(Ordering::SeqCst),
        }
    }
}

impl ReadableStore for CountingStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let value = self.inner.get(key)?;
        self.get_calls.fetch_add(1, Ordering::SeqCst);
        self.get_bytes.fetch_add(value.as_ref().map_or(0, |v| v.len() as u64), Ordering::SeqCst);
        Ok(value)
    }

    fn get_partial_values(&self, requests: &[(&str, ByteRange)]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let values = self.inner.get_partial_values(requests)?;
        self.partial_calls.fetch_add(1, Ordering::SeqCst);
        self.partial_ranges.fetch_add(requests.len() as u64, Ordering::SeqCst);
        let n: u64 = values.iter().flatten().map(|v| v.len() as u64).sum();
        self.partial_bytes.fetch_add(n, Ordering::SeqCst);
        Ok(values)
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        // Metadata only: no value bytes are transferred, so nothing is counted.
        self.inner.size(key)
    }
}

impl WritableStore for CountingStore {
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.inner.set(key, value)
    }

    fn set_partial_values(&self, writes: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        self.inner.set_partial_values(writes)
    }

    fn erase(&self, key: &str) -> Result<(), StoreError> {
        self.inner.erase(key)
    }

    fn erase_values(&self, keys: &[&str]) -> Result<(), StoreError> {
        self.inner.erase_values(keys)
    }

    fn erase_prefix(&self, prefix: &str) -> Result<(), StoreError> {
        self.inner.erase_prefix(prefix)
    }
}

impl ListableStore for CountingStore {
    fn list(&self) -> Result<Vec<String>, StoreError> {
        self.inner.list()
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        self.inner.list_prefix(prefix)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError> {
        self.inner.list_dir(prefix)
    }
}

impl Store for CountingStore {
    fn capabilities(&self) -> StoreCapabilities {
        self.inner.capabilities()
    }

    fn kind(&self) -> &'static str {
        "counting"
    }

    fn chunk_versions(&self, sealed: Sealed) -> &zarrdb::store::ChunkVersions {
        self.inner.chunk_versions(sealed)
    }
}

fn codecs(list: Value) -> Vec<NamedConfig> {
    NamedConfig::parse_list(&list).expect("a valid codec list")
}

fn metadata(index_location: &str) -> ArrayMetadata {
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let mut meta = ArrayMetadata::new(DataType::Float32, SHAPE.to_vec(), SHARD.to_vec());
    meta.codecs = codecs(json!([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": INNER,
        "codecs": [bytes, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
        "index_codecs": [bytes, {"name": "crc32c"}],
        "index_location": index_location}}]));
    meta
}

/// Non-constant, never-zero (zero is the fill value) values with some noise, so inner chunks
/// compress to different sizes and a mixed-up inner chunk would show in the data.
fn value(i: u64, j: u64) -> f32 {
    let noise = ((i * 7919 + j * 104_729) % 97) as f32 / 97.0;
    1.0 + (i * SHAPE[1] + j) as f32 * 0.25 + noise
}

/// The expected array: C-order f32 values.
struct Model {
    values: Vec<f32>,
}

impl Model {
    fn new() -> Model {
        let mut values = Vec::with_capacity((SHAPE[0] * SHAPE[1]) as usize);
        for i in 0..SHAPE[0] {
            for j in 0..SHAPE[1] {
                values.push(value(i, j));
            }
        }
        Model { values }
    }

    fn bytes(&self) -> Vec<u8> {
        self.values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn zero_box(&mut self, off: [u64; 2], shape: [u64; 2]) {
        for i in off[0]..off[0] + shape[0] {
            for j in off[1]..off[1] + shape[1] {
                self.values[(i * SHAPE[1] + j) as usize] = 0.0;
            }
        }
    }

    fn region(&self, off: [u64; 2], shape: [u64; 2]) -> Vec<u8> {
        let mut out = Vec::with_capacity((shape[0] * shape[1]) as usize * ELEM);
        for i in off[0]..off[0] + shape[0] {
            for j in off[1]..off[1] + shape[1] {
                out.extend_from_slice(&self.values[(i * SHAPE[1] + j) as usize].to_le_bytes());
            }
        }
        out
    }
}

/// A fixed LCG: the same "random" regions on every run and machine.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % bound
    }
}

/// A sharded array over a counting store, filled with `Model::new()` except for one absent shard
/// and one absent inner chunk, plus an independently parsed copy of every shard index.
struct Fixture {
    store: Arc<CountingStore>,
    array: Array,
    model: Model,
    at_start: bool,
}

/// The shard (1, 1) is erased by writing fill values over it.
const ABSENT_SHARD: [u64; 2] = [1, 1];
/// Inner chunk (1, 2) of shard (0, 0) is all fill, so the index marks it absent.
const ABSENT_INNER: [u64; 2] = [1, 2];

impl Fixture {
    fn new(index_location: &str) -> Fixture {
        let store = Arc::new(CountingStore::default());
        let dyn_store: Arc<dyn Store> = store.clone();
        Array::create(dyn_store.clone(), "/a", metadata(index_location)).unwrap();
        let array = Array::open(dyn_store, "/a").unwrap();
        let mut model = Model::new();
        array.write_region_bytes(&[0, 0], &SHAPE, &model.bytes()).unwrap();
        let shard_origin = [ABSENT_SHARD[0] * SHARD[0], ABSENT_SHARD[1] * SHARD[1]];
        let inner_origin = [ABSENT_INNER[0] * INNER[0], ABSENT_INNER[1] * INNER[1]];
        for (off, shape) in [(shard_origin, SHARD), (inner_origin, INNER)] {
            let zeros = vec![0u8; (shape[0] * shape[1]) as usize * ELEM];
            array.write_region_bytes(&off, &shape, &zeros).unwrap();
            model.zero_box(off, shape);
        }
        let fixture = Fixture { store, array, model, at_start: index_location == "start" };
        assert_eq!(fixture.store.inner.get(&fixture.shard_key(ABSENT_SHARD)).unwrap(), None, "shard erased");
        assert_eq!(fixture.stored_inner([0, 0], ABSENT_INNER), None, "inner chunk absent from the index");
        fixture
    }

    fn shard_key(&self, shard: [u64; 2]) -> String {
        self.array.chunk_key(&shard)
    }

    /// The stored size of inner chunk `inner` (coordinates within the shard) of shard `shard`,
    /// read from the shard's index parsed here, not by the library: `None` when absent.
    fn stored_inner(&self, shard: [u64; 2], inner: [u64; 2]) -> Option<u64> {
        let value = self.store.inner.get(&self.shard_key(shard)).unwrap()?;
        let len = value.len();
        let index = if self.at_start { &value[..INDEX_SIZE as usize] } else { &value[len - INDEX_SIZE as usize..] };
        let (entries, crc) = index.split_at(index.len() - 4);
        assert_eq!(crc, crc32c::crc32c(entries).to_le_bytes(), "our reading of the index layout is right");
        let at = ((inner[0] * PER_SHARD + inner[1]) * 16) as usize;
        let offset = u64::from_le_bytes(entries[at..at + 8].try_into().unwrap());
        let nbytes = u64::from_le_bytes(entries[at + 8..at + 16].try_into().unwrap());
        if (offset, nbytes) == (u64::MAX, u64::MAX) {
            return None;
        }
        assert!(offset + nbytes <= len as u64, "a valid index entry lies inside the shard");
        Some(nbytes)
    }

    /// Total stored bytes of the inner chunks a region touches (absent ones count 0).
    fn touched_inner_bytes(&self, off: [u64; 2], shape: [u64; 2]) -> u64 {
        let mut total = 0;
        for gi in off[0] / INNER[0]..=(off[0] + shape[0] - 1) / INNER[0] {
            for gj in off[1] / INNER[1]..=(off[1] + shape[1] - 1) / INNER[1] {
                let shard = [gi / PER_SHARD, gj / PER_SHARD];
                let inner = [gi % PER_SHARD, gj % PER_SHARD];
                total += self.stored_inner(shard, inner).unwrap_or(0);
            }
        }
        total
    }

    /// Read a region with fresh counters; the data must equal the model.
    fn read(&self, off: [u64; 2], shape: [u64; 2]) -> Counts {
        self.store.reset();
        let got = self.array.read_region_bytes(&off, &shape).unwrap_or_else(|e| panic!("{off:?}+{shape:?}: {e}"));
        let counts = self.store.counts();
        assert!(got == self.model.region(off, shape), "{off:?}+{shape:?}: data differs from the model");
        counts
    }

    /// Read a region inside one shard and check the partial-read bound: nothing through `get`,
    /// at most the index plus the touched inner chunks through `get_partial_values`.
    fn read_partial(&self, off: [u64; 2], shape: [u64; 2], what: &str) -> Counts {
        let counts = self.read(off, shape);
        let bound = INDEX_SIZE + self.touched_inner_bytes(off, shape);
        assert_eq!(counts.get_bytes, 0, "{what} {off:?}+{shape:?}: whole values fetched: {counts:?}");
        assert!(
            counts.partial_bytes <= bound,
            "{what} {off:?}+{shape:?}: fetched {} bytes, bound {bound} (index {INDEX_SIZE} + touched inner chunks): {counts:?}",
            counts.partial_bytes
        );
        // Sanity: the index itself was read (the bound is not met by reading nothing at all).
        assert!(counts.partial_bytes >= INDEX_SIZE, "{what} {off:?}+{shape:?}: index not read? {counts:?}");
        counts
    }
}

/// A random inner chunk (global inner-grid coordinates) outside the absent shard.
fn random_inner(rng: &mut Lcg) -> [u64; 2] {
    let grid = [SHAPE[0] / INNER[0], SHAPE[1] / INNER[1]];
    loop {
        let c = [rng.below(grid[0]), rng.below(grid[1])];
        if [c[0] / PER_SHARD, c[1] / PER_SHARD] != ABSENT_SHARD {
            return c;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

/// The acceptance bound, on random inner-chunk-aligned regions (exactly one inner chunk) and on
/// unaligned regions inside one inner chunk.
#[test]
fn one_inner_chunk_fetches_at_most_the_index_plus_that_chunk() {
    for location in ["end", "start"] {
        let fx = Fixture::new(location);
        let mut rng = Lcg(0x2545_f491_4f6c_dd1d);
        for _ in 0..40 {
            let c = random_inner(&mut rng);
            let off = [c[0] * INNER[0], c[1] * INNER[1]];
            let counts = fx.read_partial(off, INNER, &format!("{location}: aligned"));
            // One call for the index, one for the chunk (or only the index when it is absent).
            assert!(counts.partial_calls <= 2, "{location}: {counts:?}");
        }
        for _ in 0..40 {
            let c = random_inner(&mut rng);
            let start = [rng.below(INNER[0]), rng.below(INNER[1])];
            let size = [1 + rng.below(INNER[0] - start[0]), 1 + rng.below(INNER[1] - start[1])];
            let off = [c[0] * INNER[0] + start[0], c[1] * INNER[1] + start[1]];
            fx.read_partial(off, size, &format!("{location}: unaligned"));
        }
    }
}

/// A region straddling two neighbouring inner chunks of one shard fetches the index and those
/// two, no more.
#[test]
fn two_inner_chunks_fetch_at_most_the_index_plus_those_two() {
    for location in ["end", "start"] {
        let fx = Fixture::new(location);
        let mut rng = Lcg(42);
        for _ in 0..20 {
            let c = random_inner(&mut rng);
            // Keep the right-hand neighbour inside the same shard.
            let c = if c[1] % PER_SHARD == PER_SHARD - 1 { [c[0], c[1] - 1] } else { c };
            let aligned = ([c[0] * INNER[0], c[1] * INNER[1]], [INNER[0], 2 * INNER[1]]);
            // Unaligned: starts inside chunk c, ends inside its right-hand neighbour.
            let unaligned = ([c[0] * INNER[0] + 3, c[1] * INNER[1] + 10], [5, 12]);
            for (off, shape) in [aligned, unaligned] {
                let bound = INDEX_SIZE + fx.touched_inner_bytes(off, shape);
                let counts = fx.read_partial(off, shape, &format!("{location}: two inner chunks"));
                assert!(counts.partial_bytes <= bound);
            }
        }
        // A vertical pair too (different rows of the inner grid).
        let counts = fx.read_partial([INNER[0] - 1, 5], [2, 3], &format!("{location}: vertical pair"));
        assert!(counts.partial_bytes <= INDEX_SIZE + fx.touched_inner_bytes([INNER[0] - 1, 5], [2, 3]));
    }
}

/// A shard that is not stored: the store's size lookup says so, nothing is fetched (not even the
/// index), and the region reads as fill.
#[test]
fn a_missing_shard_fetches_nothing() {
    for location in ["end", "start"] {
        let fx = Fixture::new(location);
        let base = [ABSENT_SHARD[0] * SHARD[0], ABSENT_SHARD[1] * SHARD[1]];
        for (off, shape) in [([base[0] + 16, base[1] + 32], INNER), ([base[0] + 5, base[1] + 70], [20, 9])] {
            let counts = fx.read(off, shape);
            assert_eq!(counts.get_bytes + counts.partial_bytes, 0, "{location}: {counts:?}");
            assert_eq!(counts.get_calls, 0, "{location}: no whole-value read of a missing shard: {counts:?}");
            assert_eq!(counts.partial_ranges, 0, "{location}: no range is requested from a missing shard: {counts:?}");
            assert!(fx.model.region(off, shape).iter().all(|&b| b == 0), "the model holds fill there");
        }
    }
}

/// An inner chunk that the index marks absent reads as the fill value after fetching only the
/// index.
#[test]
fn an_absent_inner_chunk_reads_as_fill_after_fetching_only_the_index() {
    for location in ["end", "start"] {
        let fx = Fixture::new(location);
        let origin = [ABSENT_INNER[0] * INNER[0], ABSENT_INNER[1] * INNER[1]];
        for (off, shape) in [(origin, INNER), ([origin[0] + 2, origin[1] + 7], [9, 4])] {
            let counts = fx.read_partial(off, shape, &format!("{location}: absent inner chunk"));
            assert_eq!(counts.partial_bytes, INDEX_SIZE, "{location}: only the index: {counts:?}");
            assert!(fx.model.region(off, shape).iter().all(|&b| b == 0), "the model holds fill there");
        }
        // Straddling the absent chunk and a stored neighbour: the fill part and the data part.
        let off = [origin[0] + 4, origin[1] + 12];
        let counts = fx.read_partial(off, [4, 8], &format!("{location}: absent + stored"));
        assert!(counts.partial_bytes > INDEX_SIZE, "the stored neighbour was fetched: {counts:?}");
    }
}

/// Whole-shard and whole-array reads take the whole-value path (`get`); only correctness is
/// asserted here, the byte counts are printed for the record.
#[test]
fn whole_shard_and_whole_array_reads_are_correct() {
    for location in ["end", "start"] {
        let fx = Fixture::new(location);
        for shard in [[0, 0], [0, 1], [1, 0], ABSENT_SHARD] {
            let off = [shard[0] * SHARD[0], shard[1] * SHARD[1]];
            let counts = fx.read(off, SHARD);
            eprintln!("{location}: whole shard {shard:?}: {counts:?}");
        }
        let counts = fx.read([0, 0], SHAPE);
        eprintln!("{location}: whole array: {counts:?}");
        // A region covering one shard and part of another: both paths in one read.
        let counts = fx.read([0, 0], [SHARD[0], SHARD[1] + 20]);
        eprintln!("{location}: shard + part of a neighbour: {counts:?}");
    }
}
