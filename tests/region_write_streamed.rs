//! Large region writes stream their chunks into the store's one write transaction
//! (`Store::begin_stream`, `src/array/stream.rs`). A store that records what it is streamed
//! shows when a write streams, that a streamed write leaves exactly what the same write leaves
//! without streaming (whole, patched and erased chunks), and that a failure in the middle leaves
//! nothing and ends every encoder. On the databases: the same writes through the auto-commit
//! store give the same content on redb, LMDB and sled.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use zarrdb::store::Sealed;

use zarrdb::error::StoreError;
use zarrdb::metadata::NamedConfig;
use zarrdb::store::{
    ByteRange, ChunkVersions, DirListing, ListableStore, ReadableStore, StoreCapabilities, StreamScope, WritableStore,
};
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, MemoryStore, Store};

const SIDE: u64 = 2200;
const CHUNK: u64 = 200;

/// A memory store whose streams apply their puts at `finish`, counting streams and values, and
/// failing the put numbered `fail_at` when set.
struct Recording {
    inner: Arc<MemoryStore>,
    streams: AtomicUsize,
    values: Arc<AtomicUsize>,
    fail_at: Option<usize>,
}

struct RecordingStream {
    inner: Arc<MemoryStore>,
    pending: BTreeMap<String, Option<Vec<u8>>>,
    values: Arc<AtomicUsize>,
    fail_at: Option<usize>,
}

impl StreamScope for RecordingStream {
    fn before(&self) -> Arc<dyn Store> {
        self.inner.clone()
    }

    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), zarrdb::Error> {
        for (key, value) in values {
            let n = self.values.fetch_add(1, Ordering::SeqCst);
            if Some(n) == self.fail_at {
                let source = std::io::Error::new(std::io::ErrorKind::StorageFull, "simulated full disk");
                return Err(StoreError::Io { operation: "put", key, source }.into());
            }
            self.pending.insert(key, Some(value));
        }
        Ok(())
    }

    fn erase(&mut self, key: &str) -> Result<(), zarrdb::Error> {
        self.values.fetch_add(1, Ordering::SeqCst);
        self.pending.insert(key.to_owned(), None);
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<(), zarrdb::Error> {
        for (key, value) in self.pending {
            match value {
                Some(value) => self.inner.set_owned(&key, value)?,
                None => self.inner.erase(&key)?,
            }
        }
        Ok(())
    }
}

impl ReadableStore for Recording {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(key)
    }
    fn get_partial_values(&self, requests: &[(&str, ByteRange)]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.inner.get_partial_values(requests)
    }
}

impl WritableStore for Recording {
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.inner.set(key, value)
    }
    fn set_partial_values(&self, writes: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        self.inner.set_partial_values(writes)
    }
    fn erase(&self, key: &str) -> Result<(), StoreError> {
        self.inner.erase(key)
    }
    fn erase_prefix(&self, prefix: &str) -> Result<(), StoreError> {
        self.inner.erase_prefix(prefix)
    }
}

impl ListableStore for Recording {
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        self.inner.list_prefix(prefix)
    }
    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError> {
        self.inner.list_dir(prefix)
    }
}

impl Store for Recording {
    fn capabilities(&self) -> StoreCapabilities {
        self.inner.capabilities()
    }
    fn kind(&self) -> &'static str {
        "recording"
    }
    fn chunk_versions(&self, sealed: Sealed) -> &ChunkVersions {
        self.inner.chunk_versions(sealed)
    }
    fn begin_stream(
        &self,
        _expected_bytes: u64,
        _sealed: Sealed,
    ) -> Result<Option<Box<dyn StreamScope>>, zarrdb::Error> {
        self.streams.fetch_add(1, Ordering::SeqCst);
        Ok(Some(Box::new(RecordingStream {
            inner: self.inner.clone(),
            pending: BTreeMap::new(),
            values: self.values.clone(),
            fail_at: self.fail_at,
        })))
    }
}

fn recording(fail_at: Option<usize>) -> Arc<Recording> {
    let inner = Arc::new(MemoryStore::new());
    Arc::new(Recording { inner, streams: AtomicUsize::new(0), values: Arc::default(), fail_at })
}

fn metadata() -> ArrayMetadata {
    with_codecs(serde_json::json!([
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": 1, "checksum": false}}
    ]))
}

fn with_codecs(codecs: serde_json::Value) -> ArrayMetadata {
    let mut meta = ArrayMetadata::new(DataType::UInt32, vec![SIDE, SIDE], vec![CHUNK, CHUNK]);
    meta.codecs = NamedConfig::parse_list(&codecs).expect("valid codecs");
    meta
}

/// The chains the streamed write encodes differently: compressed, stored as decoded (the
/// gathered chunk handed over as the value), and byte-swapped.
fn chains() -> Vec<serde_json::Value> {
    vec![
        serde_json::json!([{"name": "bytes", "configuration": {"endian": "little"}},
                           {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]),
        serde_json::json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
        serde_json::json!([{"name": "bytes", "configuration": {"endian": "big"}}]),
    ]
}

/// The writes: a whole-array write, then an unaligned one over most of it with a band of zeros
/// (chunks erased, edge chunks patched), then a small one.
fn writes() -> Vec<([u64; 2], [u64; 2], Vec<u32>)> {
    let region = |at: [u64; 2], shape: [u64; 2], seed: u32| {
        let values = (0..shape[0])
            .flat_map(|r| (0..shape[1]).map(move |c| (r, c)))
            .map(|(r, c)| if (250..650).contains(&r) && seed == 2 { 0 } else { seed ^ (r * SIDE + c) as u32 | 1 })
            .collect();
        (at, shape, values)
    };
    vec![region([0, 0], [SIDE, SIDE], 1), region([17, 5], [2130, 2190], 2), region([3, 3], [50, 50], 3)]
}

fn apply(store: Arc<dyn Store>) -> Array {
    apply_with(store, metadata())
}

fn apply_with(store: Arc<dyn Store>, meta: ArrayMetadata) -> Array {
    let array = Array::create(store, "/a", meta).unwrap();
    for (at, shape, values) in writes() {
        array.write_region(&at, &shape, &values).unwrap();
    }
    array
}

fn content(array: &Array) -> (Vec<u32>, Vec<Vec<u64>>) {
    let chunks = array.stored_chunks().unwrap().into_iter().map(|(coords, _)| coords).collect();
    (array.read_all::<u32>().unwrap(), chunks)
}

#[test]
fn large_writes_stream_and_leave_what_a_direct_write_leaves() {
    for codecs in chains() {
        let expected = content(&apply_with(Arc::new(MemoryStore::new()), with_codecs(codecs.clone())));
        let store = recording(None);
        let got = content(&apply_with(store.clone(), with_codecs(codecs.clone())));
        assert!(got == expected, "a streamed write left other content than a direct one ({codecs})");
        // The two large writes streamed (every chunk they touch went through the stream); the
        // 50x50 one did not.
        assert_eq!(store.streams.load(Ordering::SeqCst), 2);
        assert_eq!(store.values.load(Ordering::SeqCst), 2 * 11 * 11);
        assert!(expected.1.len() < 121, "the band of zeros erased some chunks");
        // And what was written is what the writes say, element by element.
        let mut want = vec![0u32; (SIDE * SIDE) as usize];
        for (at, shape, values) in writes() {
            for r in 0..shape[0] {
                for c in 0..shape[1] {
                    want[((at[0] + r) * SIDE + at[1] + c) as usize] = values[(r * shape[1] + c) as usize];
                }
            }
        }
        assert!(got.0 == want, "the streamed write's values ({codecs})");
    }
}

#[test]
fn a_failed_put_leaves_nothing_and_ends_the_encoders() {
    let store = recording(Some(40));
    let array = Array::create(store.clone(), "/a", metadata()).unwrap();
    let (at, shape, values) = writes().remove(0);
    let err = array.write_region(&at, &shape, &values).unwrap_err();
    assert!(err.to_string().contains("simulated full disk"), "{err}");
    assert!(array.stored_chunks().unwrap().is_empty(), "a failed stream stored chunks");
    // The write returned, so no encoder stayed blocked on the full queue, and nothing was handed
    // over after the failed put. (A real engine failing mid-stream: tests/disk_full.rs.)
    assert_eq!(store.values.load(Ordering::SeqCst), 41);
}

#[test]
fn writes_from_rayon_threads_do_not_stream() {
    let store = recording(None);
    let array = Array::create(store.clone(), "/a", metadata()).unwrap();
    let (at, shape, values) = writes().remove(0);
    rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap().install(|| {
        array.write_region(&at, &shape, &values).unwrap();
    });
    assert_eq!(store.streams.load(Ordering::SeqCst), 0);
    assert_eq!(array.read_all::<u32>().unwrap(), values);
}

#[test]
fn databases_hold_what_a_direct_write_leaves() {
    let expected = content(&apply(Arc::new(MemoryStore::new())));
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::builder().backend(backend).create(dir.path().join("db")).unwrap();
        let got = content(&apply(db.store()));
        assert!(got == expected, "{backend:?}: the streamed writes left other content");
        drop(db);
        let db = Database::builder().backend(backend).open(dir.path().join("db")).unwrap();
        let reopened = content(&Array::open(db.store(), "/a").unwrap());
        assert!(reopened == expected, "{backend:?}: other content after reopening");
    }
}

/// A streamed write that touches far more chunk bytes than the region holds (a narrow band
/// across wide chunks, each patched whole): LMDB's map, which cannot grow inside the write, is
/// sized for the chunks, not for the region.
#[test]
fn lmdb_sizes_its_map_for_every_chunk_touched() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder()
        .backend(Backend::Lmdb)
        .lmdb_initial_map_size(256 << 20)
        .create(dir.path().join("db"))
        .unwrap();
    let meta = ArrayMetadata::new(DataType::UInt8, vec![16384, 16384], vec![64, 16384]);
    let array = Array::create(db.store(), "/a", meta).unwrap();
    // 16 MiB of region, 256 chunks of 1 MiB each read, patched and stored.
    let band = vec![7u8; 16384 * 1024];
    array.write_region(&[0, 0], &[16384, 1024], &band).unwrap();
    assert_eq!(array.stored_chunks().unwrap().len(), 256);
    assert_eq!(array.read_region::<u8>(&[100, 1000], &[1, 30]).unwrap(), [&[7u8; 24][..], &[0; 6]].concat());
}
