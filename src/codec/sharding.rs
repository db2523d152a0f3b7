//! `sharding_indexed`: a shard holds inner chunks, each encoded by its own chain, plus an index of
//! `(offset, nbytes)` pairs (little-endian uint64, C order over the inner chunk grid) at the start
//! or the end. Absent inner chunks have offset = nbytes = 2^64 - 1.
//!
//! Hostile input: the index is checked before any inner chunk is touched: every range must lie
//! inside the shard, outside the index, and not overlap another, and no inner chunk may be larger
//! than its chain can produce.

use std::borrow::Cow;
use std::mem::MaybeUninit;

use rayon::prelude::*;
use serde_json::Value;

use super::config::{map, Config};
use super::region::{
    chunk_ranges, copy_box, fill_box, for_each_index, gather_box_into, intersect, is_all, offset_in_cell, BoxIn,
};
use super::registry::{Build, Example, Registration};
use super::{ArrayToBytes, ChunkSpec, CodecChain, Fetch, Partial};
use crate::error::{CodecError, Error};
use crate::metadata::{DataType, FillValue, NamedConfig};
use crate::store::ByteRange;

/// The codec's name in `zarr.json`.
pub(crate) const NAME: &str = "sharding_indexed";

const ABSENT: u64 = u64::MAX;

/// Inner chunks are encoded one after another in runs of about this many (decoded) bytes; only
/// longer runs are split between threads.
const LEAF_BYTES: usize = 256 << 10;

/// Slabs up to this size are decoded in row order (`decode_slab_rows`), through buffers of that
/// much that each thread keeps; larger ones are placed chunk by chunk.
const MAX_ROW_ORDER_SLAB: usize = 4 << 20;

/// The largest gathering buffer a thread keeps between inner chunks.
const MAX_KEPT_GATHERED: usize = 16 << 20;

thread_local! {
    /// Each thread gathers inner chunks out of the shard into one buffer that stays allocated and
    /// cache-warm, instead of a fresh allocation per inner chunk.
    static GATHERED: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    /// The decoded inner chunks of one slab, for `decode_slab_rows`.
    static SLAB_CHUNKS: std::cell::Cell<Vec<Vec<u8>>> = const { std::cell::Cell::new(Vec::new()) };
}

#[derive(Debug)]
pub(crate) struct Sharding {
    inner_shape: Vec<u64>,
    chunks_per_shard: Vec<u64>,
    inner: CodecChain,
    index: CodecChain,
    index_at_start: bool,
    index_size: u64,
}

fn corrupt(reason: impl Into<String>) -> CodecError {
    CodecError::Corrupt { codec: "sharding_indexed", reason: reason.into(), source: None }
}

fn chain_list(config: &Config<'_>, field: &str) -> Result<Vec<NamedConfig>, CodecError> {
    let value = config.required(field)?;
    NamedConfig::list_from_json(value, field, true).map_err(|e| config.error(field, e.to_string()))
}

impl Sharding {
    pub fn from_metadata(meta: &NamedConfig, shard: &ChunkSpec) -> Result<Sharding, CodecError> {
        let config =
            Config::new("sharding_indexed", meta, &["chunk_shape", "codecs", "index_codecs", "index_location"])?;
        let inner_shape: Vec<u64> = match config.required("chunk_shape")? {
            Value::Array(items) => items
                .iter()
                .map(|v| {
                    v.as_u64()
                        .filter(|&c| c > 0)
                        .ok_or_else(|| config.error("chunk_shape", format!("{v} is not a positive integer")))
                })
                .collect::<Result<_, _>>()?,
            other => return Err(config.error("chunk_shape", format!("expected a list, found {other}"))),
        };
        if inner_shape.len() != shard.shape.len() {
            return Err(config.error(
                "chunk_shape",
                format!("{} lengths for {}-dimensional shards", inner_shape.len(), shard.shape.len()),
            ));
        }
        if let Some(d) = (0..inner_shape.len()).find(|&d| shard.shape[d] % inner_shape[d] != 0) {
            return Err(config.error(
                "chunk_shape",
                format!(
                    "inner chunk length {} does not divide the shard length {} on dimension {d}",
                    inner_shape[d], shard.shape[d]
                ),
            ));
        }
        let chunks_per_shard: Vec<u64> = shard.shape.iter().zip(&inner_shape).map(|(s, c)| s / c).collect();
        let inner_spec = ChunkSpec { shape: inner_shape.clone(), ..shard.clone() };
        let inner = CodecChain::from_metadata(&chain_list(&config, "codecs")?, &inner_spec)?;
        let index_spec = index_spec(&chunks_per_shard);
        let index = CodecChain::from_metadata(&chain_list(&config, "index_codecs")?, &index_spec)?;
        let index_size = index.fixed_encoded_size().ok_or_else(|| {
            config.error("index_codecs", "the index codecs must produce a fixed size (e.g. bytes + crc32c)")
        })?;
        let index_at_start = match config.string("index_location")? {
            None | Some("end") => false,
            Some("start") => true,
            Some(other) => {
                return Err(config.error("index_location", format!("must be \"start\" or \"end\", found \"{other}\"")))
            }
        };
        Ok(Sharding { inner_shape, chunks_per_shard, inner, index, index_at_start, index_size })
    }

    fn num_inner(&self) -> usize {
        self.chunks_per_shard.iter().product::<u64>() as usize
    }

    fn index_range(&self, shard_len: u64) -> std::ops::Range<u64> {
        if self.index_at_start {
            0..self.index_size
        } else {
            shard_len - self.index_size..shard_len
        }
    }

    /// Decode and check an encoded index: `None` for absent inner chunks, `Some(range)` otherwise.
    /// `shard_len` is the stored value's length, for range checks.
    fn parse_index(&self, encoded: &[u8], shard_len: Option<u64>) -> Result<Vec<Option<(u64, u64)>>, CodecError> {
        let decoded = self.index.decode(encoded)?;
        let max_inner = self.inner.max_encoded_size();
        let mut entries = Vec::with_capacity(self.num_inner());
        for pair in decoded.chunks_exact(16) {
            let offset = u64::from_le_bytes(pair[..8].try_into().expect("8 bytes"));
            let nbytes = u64::from_le_bytes(pair[8..].try_into().expect("8 bytes"));
            if offset == ABSENT && nbytes == ABSENT {
                entries.push(None);
                continue;
            }
            let end = offset
                .checked_add(nbytes)
                .ok_or_else(|| corrupt(format!("index entry {offset}+{nbytes} overflows")))?;
            if nbytes > max_inner {
                return Err(corrupt(format!(
                    "inner chunk of {nbytes} bytes exceeds the largest valid size {max_inner}"
                )));
            }
            if let Some(len) = shard_len {
                let index = self.index_range(len);
                if end > len || (offset < index.end && end > index.start) {
                    return Err(corrupt(format!(
                        "index entry {offset}..{end} lies outside the data of a {len}-byte shard"
                    )));
                }
            }
            entries.push(Some((offset, nbytes)));
        }
        let mut ranges: Vec<(u64, u64)> = entries.iter().flatten().map(|&(o, n)| (o, o + n)).collect();
        ranges.sort_unstable();
        if ranges.windows(2).any(|w| w[1].0 < w[0].1) {
            return Err(corrupt("index entries overlap"));
        }
        Ok(entries)
    }

    /// Decode every inner chunk into `out`, the whole decoded shard; returns only once every byte
    /// of `out` has been written.
    fn decode_slabs(
        &self,
        encoded: &[u8],
        entries: &[Option<(u64, u64)>],
        spec: &ChunkSpec,
        out: &mut [MaybeUninit<u8>],
    ) -> Result<(), CodecError> {
        // Inner chunks at the same position along dimension 0 fill one contiguous slab of the
        // shard, so slabs decode in parallel into disjoint parts of the output. A 0-d shard is one
        // slab holding its one inner chunk.
        let slabs = self.chunks_per_shard.first().map_or(1, |&n| n as usize);
        if out.is_empty() {
            return Ok(());
        }
        let slab_len = out.len() / slabs;
        let per_slab = entries.len() / slabs;
        // `zip_eq`: a slab without entries would be left unwritten, so a mismatch must not pass.
        out.par_chunks_mut(slab_len)
            .zip_eq(entries.par_chunks(per_slab))
            .try_for_each(|(slab, entries)| self.decode_slab(encoded, entries, spec, slab))
    }

    /// Decode the inner chunks of one slab (`entries`, in C order) into `slab`; absent ones take
    /// the fill value. Every byte of `slab` is written: the inner chunks tile the slab (their shape
    /// divides the shard's), and each is written whole, from a decoded chunk whose length the
    /// chain has checked or from the fill value.
    fn decode_slab(
        &self,
        encoded: &[u8],
        entries: &[Option<(u64, u64)>],
        spec: &ChunkSpec,
        slab: &mut [MaybeUninit<u8>],
    ) -> Result<(), CodecError> {
        if self.decodes_in_row_order(slab.len()) {
            // The slab in C order: its rows follow one another, as the shard's strides say.
            let strides = c_strides(&spec.shape, spec.data_type.size());
            let written = self.decode_slab_rows(encoded, entries, spec, slab, 0, &strides)?;
            // Part of the safety argument of `decode`: the rows account for the whole slab.
            assert_eq!(written, slab.len(), "inner chunk rows tile their slab");
            return Ok(());
        }
        let mut slab_shape = spec.shape.clone();
        if let Some(first) = slab_shape.first_mut() {
            *first = self.inner_shape[0];
        }
        let runs = Runs::new(&self.inner_shape, &slab_shape, spec.data_type.size());
        let mut fill_run = Vec::new();
        let mut written = 0;
        for (k, entry) in entries.iter().enumerate() {
            let start = self.start_of(k);
            match *entry {
                Some((o, n)) => self.inner.decode_with(&encoded[o as usize..(o + n) as usize], |chunk| {
                    let mut pieces = chunk.chunks_exact(runs.len);
                    runs.for_each(&start, |at| write(&mut slab[at..at + runs.len], pieces.next().expect("whole runs")));
                })?,
                None => {
                    if fill_run.is_empty() {
                        fill_run = spec.fill_value.as_le_bytes().repeat(runs.len / spec.data_type.size());
                    }
                    runs.for_each(&start, |at| write(&mut slab[at..at + runs.len], &fill_run));
                }
            }
            written += runs.chunk_bytes();
        }
        // Part of the safety argument of `decode`: the tiled chunks account for the whole slab.
        assert_eq!(written, slab.len(), "inner chunks tile their slab");
        Ok(())
    }

    /// `decode_slab` for slabs with several inner chunks side by side along the last dimension:
    /// every inner chunk is decoded first, into buffers the thread keeps, and the slab is then
    /// written front to back, one row of each chunk in turn. Placing each chunk as soon as it is
    /// decoded writes its rows a whole shard row apart, touching a new page per row; in row order
    /// the writes stream, as any decoder's output does. Every byte of `slab` is written: the
    /// cursor advances by one chunk row per write, and the rows of the chunks tile the slab.
    ///
    /// The slab's rows go to `slab` at `base` plus the row's index times `strides` (bytes, one
    /// per dimension of the shard; the last is not used): the shard's own C-order buffer, or a
    /// box of a larger array (`decode_into_box`). Returns the bytes written.
    fn decode_slab_rows<S: RowSink + ?Sized>(
        &self,
        encoded: &[u8],
        entries: &[Option<(u64, u64)>],
        spec: &ChunkSpec,
        slab: &mut S,
        base: usize,
        strides: &[usize],
    ) -> Result<usize, CodecError> {
        let n = self.inner_shape.len();
        let (inner, per_shard) = (&self.inner_shape, &self.chunks_per_shard);
        let row = inner[n - 1] as usize * spec.data_type.size();
        let across = per_shard[n - 1] as usize;
        // Taken, not borrowed, for the reason given in `encode_inner`.
        let mut chunks = SLAB_CHUNKS.take();
        chunks.resize_with(entries.len(), Vec::new);
        let decoded = entries.iter().zip(chunks.iter_mut()).try_for_each(|(entry, buf)| match *entry {
            Some((o, len)) => self.inner.decode_into(&encoded[o as usize..(o + len) as usize], buf),
            None => Ok(()),
        });
        let placed = decoded.map(|()| {
            let fill_row = spec.fill_value.as_le_bytes().repeat(inner[n - 1] as usize);
            // Every row of the slab but along the last dimension: dimension 0 spans the inner
            // chunk, the others the whole shard.
            let mut rows: Vec<_> = spec.shape[..n - 1].iter().map(|&len| 0..len).collect();
            rows[0] = 0..inner[0];
            let mut written = 0;
            for_each_index(&rows, |i| {
                let (mut first_chunk, mut row_in_chunk) = (0, i[0] as usize);
                for d in 1..n - 1 {
                    first_chunk = first_chunk * per_shard[d] as usize + (i[d] / inner[d]) as usize;
                    row_in_chunk = row_in_chunk * inner[d] as usize + (i[d] % inner[d]) as usize;
                }
                let mut at = base + i.iter().zip(strides).map(|(&i, &stride)| i as usize * stride).sum::<usize>();
                for k in first_chunk * across..(first_chunk + 1) * across {
                    let src = match entries[k] {
                        Some(_) => &chunks[k][row_in_chunk * row..(row_in_chunk + 1) * row],
                        None => &fill_row[..],
                    };
                    slab.put(at, src);
                    at += row;
                    written += row;
                }
            });
            written
        });
        SLAB_CHUNKS.set(chunks);
        placed
    }

    /// Whether slabs of `slab_len` bytes are decoded in row order (`decode_slab_rows`): inner
    /// chunks side by side along the last dimension, and few enough bytes to keep them decoded.
    fn decodes_in_row_order(&self, slab_len: usize) -> bool {
        let n = self.inner_shape.len();
        n >= 2 && self.chunks_per_shard[n - 1] > 1 && slab_len <= MAX_ROW_ORDER_SLAB
    }

    /// The element position of the `k`-th inner chunk (C order) in its shard. For the `k`-th
    /// chunk of a slab it is also its position in the slab, since `k` is below a slab's count.
    fn start_of(&self, k: usize) -> Vec<u64> {
        let mut coords = vec![0; self.inner_shape.len()];
        let mut rest = k as u64;
        for d in (0..coords.len()).rev() {
            coords[d] = rest % self.chunks_per_shard[d];
            rest /= self.chunks_per_shard[d];
        }
        self.inner_start(&coords)
    }

    /// Encode the inner chunks `range` (C order) of `shard`, appending each to `out` and its
    /// `(offset in out, length)` to `entries` (`None` when it holds only the fill value).
    ///
    /// Halves run through `rayon::join_context`: when the pool is busy with other chunks, the
    /// second half is not stolen and is encoded after the first, straight into `out`; only a half
    /// that another thread did steal is encoded into a buffer of its own and then copied in. So
    /// the shard is assembled without copying when the caller already keeps every core busy, and
    /// in parallel when it does not.
    fn encode_range(
        &self,
        shard: &[u8],
        spec: &ChunkSpec,
        range: std::ops::Range<usize>,
        out: &mut Vec<u8>,
        entries: &mut Vec<Option<(u64, u64)>>,
    ) -> Result<(), CodecError> {
        let inner_bytes = (self.inner.max_encoded_size() as usize).max(1);
        if range.len() <= (LEAF_BYTES / inner_bytes).max(1) {
            return range.into_iter().try_for_each(|k| self.encode_inner(shard, spec, k, out, entries));
        }
        let mid = range.start + range.len() / 2;
        let (first, stolen) = rayon::join_context(
            |_| self.encode_range(shard, spec, range.start..mid, out, entries),
            |context| {
                if !context.migrated() {
                    return Ok(None);
                }
                let bound = (range.end - mid).saturating_mul(inner_bytes);
                let (mut part, mut part_entries) = (Vec::with_capacity(bound), Vec::new());
                self.encode_range(shard, spec, mid..range.end, &mut part, &mut part_entries)?;
                Ok(Some((part, part_entries)))
            },
        );
        first?;
        match stolen? {
            None => self.encode_range(shard, spec, mid..range.end, out, entries),
            Some((part, part_entries)) => {
                let base = out.len() as u64;
                out.extend_from_slice(&part);
                entries.extend(part_entries.into_iter().map(|e| e.map(|(o, n)| (o + base, n))));
                Ok(())
            }
        }
    }

    /// Encode the `k`-th inner chunk (C order) of `shard` onto the end of `out`.
    fn encode_inner(
        &self,
        shard: &[u8],
        spec: &ChunkSpec,
        k: usize,
        out: &mut Vec<u8>,
        entries: &mut Vec<Option<(u64, u64)>>,
    ) -> Result<(), CodecError> {
        let start = self.start_of(k);
        // Taken, not borrowed: a nested shard's encoding, or work rayon runs on this thread while
        // it waits, finds the slot empty and uses a buffer of its own.
        let mut gathered = GATHERED.take();
        let elem = spec.data_type.size();
        gather_box_into(shard, &BoxIn { shape: &spec.shape, start: &start }, &self.inner_shape, elem, &mut gathered);
        // All-fill inner chunks are not stored, as all-fill chunks are not.
        let result = if is_all(&gathered, spec.fill_value.as_le_bytes()) {
            entries.push(None);
            Ok(())
        } else {
            let offset = out.len();
            self.inner.encode_append(&gathered, out).map(|()| {
                entries.push(Some((offset as u64, (out.len() - offset) as u64)));
            })
        };
        if gathered.capacity() <= MAX_KEPT_GATHERED {
            GATHERED.set(gathered);
        }
        result
    }

    /// The index of a stored shard, checked against its length.
    fn stored_index(&self, encoded: &[u8]) -> Result<Vec<Option<(u64, u64)>>, CodecError> {
        let len = encoded.len() as u64;
        if len < self.index_size {
            return Err(corrupt(format!("a {len}-byte shard cannot hold its {}-byte index", self.index_size)));
        }
        let range = self.index_range(len);
        self.parse_index(&encoded[range.start as usize..range.end as usize], Some(len))
    }

    fn inner_start(&self, coords: &[u64]) -> Vec<u64> {
        coords.iter().zip(&self.inner_shape).map(|(c, s)| c * s).collect()
    }
}

/// Where an inner chunk's bytes go in a C-order slab: one contiguous run of `len` bytes per index
/// of the dimensions before the trailing ones the chunk spans whole.
struct Runs {
    len: usize,
    /// The inner chunk's extent on the dimensions that are iterated, not merged into a run.
    outer: Vec<u64>,
    /// The slab's stride in bytes on every dimension.
    strides: Vec<usize>,
}

impl Runs {
    fn new(inner_shape: &[u64], slab_shape: &[u64], elem: usize) -> Runs {
        let n = inner_shape.len();
        let strides = c_strides(slab_shape, elem);
        // Merge trailing dimensions the chunk spans whole, as in `region::copy_box`.
        let mut merged = n;
        let mut len = elem;
        while merged > 0 {
            merged -= 1;
            len *= inner_shape[merged] as usize;
            if merged == 0 || inner_shape[merged] != slab_shape[merged] {
                break;
            }
        }
        Runs { len, outer: inner_shape[..merged].to_vec(), strides }
    }

    fn chunk_bytes(&self) -> usize {
        self.len * self.outer.iter().product::<u64>() as usize
    }

    /// Call `f` with the byte offset of every run of the chunk starting at element `start`, in
    /// C order (the order of the chunk's own bytes).
    fn for_each(&self, start: &[u64], mut f: impl FnMut(usize)) {
        let base: usize = start.iter().zip(&self.strides).map(|(&s, &stride)| s as usize * stride).sum();
        let ranges: Vec<_> = self.outer.iter().map(|&n| 0..n).collect();
        for_each_index(&ranges, |i| {
            f(base + i.iter().zip(&self.strides).map(|(&i, &stride)| i as usize * stride).sum::<usize>());
        });
    }
}

/// Where `decode_slab_rows` puts rows: a shard's uninitialised buffer or an array's bytes.
trait RowSink {
    /// Copy `src` to the bytes starting at `at`.
    fn put(&mut self, at: usize, src: &[u8]);
}

impl RowSink for [MaybeUninit<u8>] {
    fn put(&mut self, at: usize, src: &[u8]) {
        write(&mut self[at..at + src.len()], src);
    }
}

impl RowSink for [u8] {
    fn put(&mut self, at: usize, src: &[u8]) {
        self[at..at + src.len()].copy_from_slice(src);
    }
}

/// The byte strides of a C-order buffer of `shape`.
fn c_strides(shape: &[u64], elem: usize) -> Vec<usize> {
    let mut strides = vec![elem; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1] as usize;
    }
    strides
}

/// Copy `src` into `dst`, which has the same length, initialising it.
fn write(dst: &mut [MaybeUninit<u8>], src: &[u8]) {
    assert_eq!(dst.len(), src.len());
    // Compiled to a memcpy; `MaybeUninit::write_copy_of_slice` is newer than the crate's MSRV.
    for (d, &s) in dst.iter_mut().zip(src) {
        d.write(s);
    }
}

fn index_spec(chunks_per_shard: &[u64]) -> ChunkSpec {
    let mut shape = chunks_per_shard.to_vec();
    shape.push(2);
    ChunkSpec {
        shape,
        data_type: DataType::UInt64,
        fill_value: FillValue::from_le_bytes(ABSENT.to_le_bytes().to_vec()),
    }
}

impl ArrayToBytes for Sharding {
    fn encode<'a>(&self, decoded: Cow<'a, [u8]>, spec: &ChunkSpec) -> Result<Cow<'a, [u8]>, CodecError> {
        let index_len = self.index_size as usize;
        // Room for every inner chunk at its worst, so the encoded chunks are appended in place and
        // the buffer never moves; pages beyond what is written are never touched.
        let bound = usize::try_from(self.max_encoded_size(spec)).unwrap_or(usize::MAX);
        let mut out = Vec::with_capacity(bound);
        if self.index_at_start {
            out.resize(index_len, 0);
        }
        let mut entries = Vec::with_capacity(self.num_inner());
        self.encode_range(&decoded, spec, 0..self.num_inner(), &mut out, &mut entries)?;
        let mut index = Vec::with_capacity(entries.len() * 16);
        for entry in &entries {
            let (o, n) = entry.unwrap_or((ABSENT, ABSENT));
            index.extend_from_slice(&o.to_le_bytes());
            index.extend_from_slice(&n.to_le_bytes());
        }
        let index = self.index.encode(index)?;
        debug_assert_eq!(index.len(), index_len);
        if self.index_at_start {
            out[..index_len].copy_from_slice(&index);
        } else {
            out.extend_from_slice(&index);
        }
        // A well-compressed shard would otherwise hold on to its worst-case allocation.
        if out.len() < out.capacity() / 2 {
            out.shrink_to_fit();
        }
        Ok(Cow::Owned(out))
    }

    fn decode(&self, encoded: Cow<'_, [u8]>, spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        let entries = self.stored_index(&encoded)?;
        // Every byte is written by the decoding below, so the shard is not zero-filled first: that
        // fill is a whole extra pass over memory, as large as the decoding's own output.
        let total = spec.num_bytes() as usize;
        let mut shard = Vec::with_capacity(total);
        self.decode_slabs(&encoded, &entries, spec, &mut shard.spare_capacity_mut()[..total])?;
        // SAFETY: `decode_slabs` returned Ok, which it does only after writing every one of the
        // first `total` bytes of the allocation (see `decode_slab`), so they are initialised.
        unsafe { shard.set_len(total) };
        Ok(shard)
    }

    fn decode_into_box(
        &self,
        encoded: &[u8],
        spec: &ChunkSpec,
        dst: &mut [u8],
        dst_box: &BoxIn<'_>,
    ) -> Result<bool, CodecError> {
        let elem = spec.data_type.size();
        let slabs = self.chunks_per_shard.first().map_or(1, |&n| n as usize);
        let slab_len = (spec.num_bytes() as usize).checked_div(slabs).unwrap_or(0);
        let fits = dst_box.shape.len() == spec.shape.len()
            && dst_box.start.len() == spec.shape.len()
            && (0..spec.shape.len()).all(|d| dst_box.start[d].saturating_add(spec.shape[d]) <= dst_box.shape[d])
            && dst.len() as u64 == dst_box.shape.iter().product::<u64>().saturating_mul(elem as u64);
        if !fits || spec.shape.is_empty() || slab_len == 0 || !self.decodes_in_row_order(slab_len) {
            return Ok(false);
        }
        let entries = self.stored_index(encoded)?;
        let strides = c_strides(dst_box.shape, elem);
        // Slabs are `inner_shape[0]` rows of `dst` each, so they split `dst` into disjoint runs
        // of whole rows that decode in parallel; within one, a row lands at the box's offset on
        // the other dimensions.
        let slab_stride = self.inner_shape[0] as usize * strides[0];
        let first = dst_box.start[0] as usize * strides[0];
        let base: usize = dst_box.start.iter().zip(&strides).skip(1).map(|(&s, &stride)| s as usize * stride).sum();
        let per_slab = entries.len() / slabs;
        dst[first..first + slabs * slab_stride]
            .par_chunks_mut(slab_stride)
            .zip_eq(entries.par_chunks(per_slab))
            .try_for_each(|(rows, entries)| {
                let written = self.decode_slab_rows(encoded, entries, spec, rows, base, &strides)?;
                debug_assert_eq!(written, slab_len, "a slab's rows are written whole");
                Ok(())
            })?;
        Ok(true)
    }

    fn max_encoded_size(&self, _spec: &ChunkSpec) -> u64 {
        self.inner.max_encoded_size().saturating_mul(self.num_inner() as u64).saturating_add(self.index_size)
    }

    fn fixed_encoded_size(&self, _spec: &ChunkSpec) -> Option<u64> {
        None
    }

    fn to_metadata(&self) -> NamedConfig {
        let chain = |c: &CodecChain| Value::Array(c.to_metadata().iter().map(NamedConfig::to_json).collect());
        NamedConfig::with_configuration(
            "sharding_indexed",
            map([
                ("chunk_shape", self.inner_shape.clone().into()),
                ("codecs", chain(&self.inner)),
                ("index_codecs", chain(&self.index)),
                ("index_location", if self.index_at_start { "start" } else { "end" }.into()),
            ]),
        )
    }

    fn supports_partial_decode(&self) -> bool {
        true
    }

    fn partial_decode(
        &self,
        fetch: &mut Fetch<'_>,
        key: &str,
        value_len: u64,
        spec: &ChunkSpec,
        offset: &[u64],
        shape: &[u64],
    ) -> Result<Partial, Error> {
        let codec_err = |source: CodecError| Error::Codec { key: key.to_owned(), source };
        let index_range = if self.index_at_start {
            ByteRange::FromStart { offset: 0, length: Some(self.index_size) }
        } else {
            ByteRange::Suffix(self.index_size)
        };
        if value_len < self.index_size {
            let reason = format!("a {value_len}-byte shard cannot hold its {}-byte index", self.index_size);
            return Err(codec_err(corrupt(reason)));
        }
        let Some(mut parts) = fetch(&[index_range])? else { return Ok(Partial::Absent) };
        // The value's length lets the index be checked exactly as for a whole read: every range
        // inside the shard and outside the index, before anything else is fetched.
        let entries = self.parse_index(&parts.remove(0), Some(value_len)).map_err(codec_err)?;
        let needed_ranges = chunk_ranges(offset, shape, &self.inner_shape);
        let mut needed = Vec::new();
        for_each_index(&needed_ranges, |c| needed.push(c.to_vec()));
        let linear = |c: &[u64]| c.iter().zip(&self.chunks_per_shard).fold(0u64, |acc, (i, n)| acc * n + i) as usize;
        let requests: Vec<ByteRange> = needed
            .iter()
            .filter_map(|c| entries[linear(c)].map(|(o, n)| ByteRange::FromStart { offset: o, length: Some(n) }))
            .collect();
        let mut fetched = if requests.is_empty() {
            Vec::new()
        } else {
            match fetch(&requests)? {
                Some(parts) => parts,
                None => return Ok(Partial::Absent),
            }
        }
        .into_iter();
        let elem = spec.data_type.size();
        let out_len = shape.iter().product::<u64>() as usize * elem;
        let mut out = vec![0u8; out_len];
        for coords in &needed {
            let (lo, size) = intersect(coords, &self.inner_shape, offset, shape);
            let in_out: Vec<u64> = lo.iter().zip(offset).map(|(l, o)| l - o).collect();
            let dst = BoxIn { shape, start: &in_out };
            match entries[linear(coords)] {
                None => fill_box(&mut out, &dst, &size, spec.fill_value.as_le_bytes()),
                Some(_) => {
                    let bytes = fetched
                        .next()
                        .ok_or_else(|| codec_err(corrupt("the store returned fewer ranges than requested")))?;
                    let in_chunk = offset_in_cell(&lo, coords, &self.inner_shape);
                    let src = BoxIn { shape: &self.inner_shape, start: &in_chunk };
                    self.inner
                        .decode_with(&bytes, |chunk| copy_box(chunk, &src, &mut out, &dst, &size, elem))
                        .map_err(codec_err)?;
                }
            }
        }
        Ok(Partial::Data(out))
    }
}

/// The typed `Codec::Sharding` of the Rust API as its `zarr.json` entry.
pub(crate) fn typed(config: crate::metadata::ShardingConfig) -> NamedConfig {
    let named = |codecs: Vec<crate::metadata::Codec>| codecs.into_iter().map(NamedConfig::from).collect();
    entry(config.chunk_shape, named(config.codecs), named(config.index_codecs), config.index_location)
}

/// Shards of inner chunks of `chunk_shape` encoded by `inner`, with the index of
/// `ShardingConfig::new` (`ArrayMetadata::with_shards`).
pub(crate) fn wrap(chunk_shape: Vec<u64>, inner: Vec<NamedConfig>) -> NamedConfig {
    let default = crate::metadata::ShardingConfig::new(Vec::new());
    let index = default.index_codecs.into_iter().map(NamedConfig::from).collect();
    entry(chunk_shape, inner, index, default.index_location)
}

/// The codec's `zarr.json` entry.
fn entry(
    chunk_shape: Vec<u64>,
    codecs: Vec<NamedConfig>,
    index_codecs: Vec<NamedConfig>,
    index_location: crate::metadata::IndexLocation,
) -> NamedConfig {
    let list = |codecs: Vec<NamedConfig>| Value::Array(codecs.iter().map(NamedConfig::to_json).collect());
    let location = if index_location == crate::metadata::IndexLocation::End { "end" } else { "start" };
    NamedConfig::with_configuration(
        NAME,
        map([
            ("chunk_shape", chunk_shape.into()),
            ("codecs", list(codecs)),
            ("index_codecs", list(index_codecs)),
            ("index_location", location.into()),
        ]),
    )
}

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::ArrayToBytes(|meta, decoded| Ok(Box::new(Sharding::from_metadata(meta, decoded)?))),
    fixed_size_only: true,
    home: file!(),
    example: Some(Example {
        data_type: "uint16",
        codecs: r#"[{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 5], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}], "index_location": "end"}}]"#,
    }),
    v2: None,
    short: None,
};
