//! Reading and writing n-d regions: split into chunks, decode/encode in parallel, copy boxes.
//!
//! Parallelism uses rayon's global pool (one thread per core), shared by every caller, so two
//! large reads at once split the cores instead of oversubscribing them; codec libraries run
//! single-threaded inside it.

use crate::store::Sealed;
use rayon::prelude::*;

use super::chunk_sync;
use super::{Array, Element, Synchronizer};
use crate::codec::region::{self, chunk_ranges, copy_box, fill_box, for_each_index, intersect, offset_in_cell, BoxIn};
use crate::codec::Partial;
use crate::error::{ArrayError, Error};
use crate::store::chunk_versions::{fingerprint, Fingerprint};
use crate::store::ByteRange;

/// Chunks decoded per parallel batch on reads: bounds the decoded chunks held at once (beyond the
/// output buffer) to a few per core.
const READ_BATCH_PER_THREAD: usize = 4;

/// The part of one chunk a region touches.
pub(super) struct Part {
    pub coords: Vec<u64>,
    /// Lower corner in array coordinates.
    pub lo: Vec<u64>,
    /// Size of the intersection.
    pub size: Vec<u64>,
}

/// What a read of one chunk produced.
enum ReadPiece {
    /// The whole decoded chunk.
    Chunk(Vec<u8>),
    /// Exactly the intersection box, C order.
    Box(Vec<u8>),
    /// Not stored: fill value.
    Fill,
}

impl Array {
    /// Check a region against the array and return its size in bytes.
    pub(super) fn check_region(&self, offset: &[u64], shape: &[u64]) -> Result<usize, Error> {
        let array_shape = self.shape();
        let rank = array_shape.len();
        let array = || self.path.to_string();
        if offset.len() != rank || shape.len() != rank {
            let given = if offset.len() != rank { offset.len() } else { shape.len() };
            return Err(ArrayError::RankMismatch { array: array(), expected: rank, given }.into());
        }
        let inside = offset
            .iter()
            .zip(shape)
            .zip(array_shape)
            .all(|((&o, &s), &n)| o.checked_add(s).is_some_and(|end| end <= n));
        if !inside {
            let region = offset
                .iter()
                .zip(shape)
                .map(|(o, s)| format!("{o}..{}", o.saturating_add(*s)))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(ArrayError::OutOfBounds {
                array: array(),
                region: format!("[{region}]"),
                shape: array_shape.to_vec(),
            }
            .into());
        }
        // Checked: a region of rank 3 or more can hold more than u128::MAX elements.
        let elements = shape.iter().try_fold(1u128, |n, &s| n.checked_mul(s as u128));
        let bytes = elements.and_then(|n| n.checked_mul(self.data_type().size() as u128));
        bytes
            .and_then(|b| usize::try_from(b).ok())
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| ArrayError::TooLarge { array: array(), elements: elements.unwrap_or(u128::MAX) }.into())
    }

    /// Every chunk the region touches, with the touched box.
    pub(super) fn parts(&self, offset: &[u64], shape: &[u64]) -> Vec<Part> {
        let chunk_shape = self.chunk_shape();
        let mut parts = Vec::new();
        for_each_index(&chunk_ranges(offset, shape, chunk_shape), |coords| {
            let (lo, size) = intersect(coords, chunk_shape, offset, shape);
            parts.push(Part { coords: coords.to_vec(), lo, size });
        });
        parts
    }

    /// Whether `part` covers the chunk's part inside the array (the rest of an edge chunk is
    /// padding that holds the fill value).
    pub(super) fn covers(&self, part: &Part) -> bool {
        let (chunk_shape, array_shape) = (self.chunk_shape(), self.shape());
        (0..part.coords.len()).all(|d| {
            let origin = part.coords[d] * chunk_shape[d];
            part.lo[d] == origin && part.lo[d] + part.size[d] == (origin + chunk_shape[d]).min(array_shape[d])
        })
    }

    /// Read the region `offset..offset+shape` as C-order little-endian element bytes.
    /// Missing chunks read as the fill value.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// let a = Array::create(store, "/a", ArrayMetadata::new(DataType::UInt16, vec![3], vec![2])).unwrap();
    /// a.write_region_bytes(&[1], &[2], &[1, 0, 2, 0]).unwrap();
    /// assert_eq!(a.read_region_bytes(&[0], &[3]).unwrap(), vec![0, 0, 1, 0, 2, 0]);
    /// ```
    pub fn read_region_bytes(&self, offset: &[u64], shape: &[u64]) -> Result<Vec<u8>, Error> {
        self.require_fixed_size()?;
        let nbytes = self.check_region(offset, shape)?;
        let mut out = super::output::zeroed(nbytes);
        self.scoped(false, |a| a.read_region_into_unscoped(offset, shape, &mut out))?;
        Ok(out)
    }

    /// Read the region `offset..offset+shape` into `out` as C-order little-endian element
    /// bytes, as [`Array::read_region_bytes`] does, without allocating the output: a caller that
    /// already holds the destination (a numpy array, a memory map, a reused buffer) saves a copy
    /// of the region and the fresh pages it would take. Every byte of `out` is written (missing
    /// chunks as the fill value), whatever it held before. `out` must be exactly the region's
    /// size (`ArrayError::BufferLength` otherwise, before any chunk is read).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// let a = Array::create(store, "/a", ArrayMetadata::new(DataType::UInt16, vec![3], vec![2])).unwrap();
    /// a.write_region_bytes(&[1], &[2], &[1, 0, 2, 0]).unwrap();
    /// let mut out = [0xff; 6];
    /// a.read_region_bytes_into(&[0], &[3], &mut out).unwrap();
    /// assert_eq!(out, [0, 0, 1, 0, 2, 0]);
    /// ```
    pub fn read_region_bytes_into(&self, offset: &[u64], shape: &[u64], out: &mut [u8]) -> Result<(), Error> {
        self.require_fixed_size()?;
        let nbytes = self.check_region(offset, shape)?;
        if out.len() != nbytes {
            let (expected, given) = (nbytes as u64, out.len() as u64);
            return Err(ArrayError::BufferLength { array: self.path.to_string(), expected, given }.into());
        }
        self.scoped(false, |a| a.read_region_into_unscoped(offset, shape, out))
    }

    /// `read_region_bytes_into` inside the caller's snapshot, `out` already checked to be the
    /// region's size.
    fn read_region_into_unscoped(&self, offset: &[u64], shape: &[u64], out: &mut [u8]) -> Result<(), Error> {
        if !self.metadata.is_regular() {
            return self.read_region_rectilinear(offset, shape, out);
        }
        let parts = self.parts(offset, shape);
        if shape.is_empty() {
            // 0-d: one element, one chunk.
            return self.read_into(&parts, out, offset, shape, 0);
        }
        // Chunks in one row along dimension 0 write one contiguous slab of the output, so the
        // output splits into disjoint slabs that tasks fill in parallel without sharing; each task
        // holds at most one decoded chunk at a time.
        let row_bytes = shape[1..].iter().product::<u64>() as usize * self.data_type().size();
        let mut rows: Vec<(u64, &[Part])> = Vec::new();
        let mut rest = &parts[..];
        while let Some(first) = rest.first() {
            let n = rest.iter().take_while(|p| p.coords[0] == first.coords[0]).count();
            rows.push((first.lo[0], &rest[..n]));
            rest = &rest[n..];
        }
        let mut slabs = Vec::with_capacity(rows.len());
        let mut remaining = out;
        for (lo, row) in &rows {
            let (slab, tail) = remaining.split_at_mut(row[0].size[0] as usize * row_bytes);
            slabs.push((*lo, *row, slab));
            remaining = tail;
        }
        let slab_shape = |row: &[Part]| {
            let mut slab_shape = shape.to_vec();
            slab_shape[0] = row[0].size[0];
            slab_shape
        };
        if parts.len() == 1 || self.parts_are_cheap(parts.len()) {
            // One chunk has nothing to share out, and a few small ones less than the hop to the
            // pool and back costs; the pool's workers, woken for them, then spin beside the
            // caller's other threads (`parts_are_cheap`).
            return slabs
                .into_iter()
                .try_for_each(|(lo, row, slab)| self.read_into(row, slab, offset, &slab_shape(row), lo));
        }
        let wide = slabs.len() < rayon::current_num_threads();
        slabs.into_par_iter().try_for_each(|(lo, row, slab)| {
            let slab_shape = slab_shape(row);
            if wide && row.len() > 1 {
                // Few rows: parallelise across the chunks of a row instead. A row of one chunk
                // is read in place below, its chunk decoded into per-thread buffers.
                let batch = rayon::current_num_threads() * READ_BATCH_PER_THREAD;
                row.chunks(batch).try_for_each(|batch| {
                    let pieces: Vec<ReadPiece> =
                        batch.par_iter().map(|p| self.read_piece(p)).collect::<Result<_, _>>()?;
                    for (part, piece) in batch.iter().zip(pieces) {
                        self.place(part, piece, slab, offset, &slab_shape, lo);
                    }
                    Ok(())
                })
            } else {
                self.read_into(row, slab, offset, &slab_shape, lo)
            }
        })
    }

    /// Read `parts` one by one into `dst`, a buffer of `dst_shape` whose first row is array row
    /// `row0`.
    fn read_into(
        &self,
        parts: &[Part],
        dst: &mut [u8],
        offset: &[u64],
        dst_shape: &[u64],
        row0: u64,
    ) -> Result<(), Error> {
        for part in parts {
            match self.read_partial(part)? {
                Some(piece) => self.place(part, piece, dst, offset, dst_shape, row0),
                None => self.read_whole_into(part, dst, offset, dst_shape, row0)?,
            }
        }
        Ok(())
    }

    /// Read the chunk of `part` whole and copy its box into `dst` (as in `place`), decoding it
    /// straight from where the store holds the value ([`Self::with_stored_chunk`]) into
    /// per-thread buffers, or from the value itself when it is stored as decoded: no copy of the
    /// chunk of its own.
    fn read_whole_into(
        &self,
        part: &Part,
        dst: &mut [u8],
        offset: &[u64],
        dst_shape: &[u64],
        row0: u64,
    ) -> Result<(), Error> {
        let key = self.chunk_key(&part.coords);
        let whole = part.size == self.chunk_shape();
        let decoded = self.with_stored_chunk(&key, |encoded| {
            if whole {
                // A shard decodes its inner chunks straight into their place in `dst`.
                let start = dst_start(part, offset, row0);
                let dst_box = BoxIn { shape: dst_shape, start: &start };
                match self.chain().decode_into_box(encoded, &mut *dst, &dst_box) {
                    Ok(false) => {}
                    placed => return placed.map(|_| ()),
                }
            }
            let place = |chunk: &[u8]| self.place_chunk(part, chunk, &mut *dst, offset, dst_shape, row0);
            self.chain().decode_with(encoded, place)
        })?;
        match decoded {
            Some(decoded) => decoded.map_err(|source| Error::Codec { key, source }),
            None => {
                self.place(part, ReadPiece::Fill, dst, offset, dst_shape, row0);
                Ok(())
            }
        }
    }

    /// `use_value` applied to the chunk stored under `key` where the store holds it, or `None`
    /// when it is not stored. A chunk longer than the array's codecs can produce is refused
    /// before it is read ([`Self::stored_size_limit`]), in the same lookup.
    pub(super) fn with_stored_chunk<T>(
        &self,
        key: &str,
        use_value: impl FnOnce(&[u8]) -> T,
    ) -> Result<Option<T>, Error> {
        let limit = self.stored_size_limit();
        let mut use_value = Some(use_value);
        let mut used = None;
        let found =
            self.store.with_value_within(key, limit, &mut |stored| used = use_value.take().map(|f| f(stored)))?;
        match found {
            Some(stored) if stored > limit => Err(stored_too_large(key.to_owned(), stored, limit)),
            _ => Ok(used),
        }
    }

    /// The longest value a chunk of this array may be stored as: reading a hostile value whole
    /// would cost its size in memory, and the store knows its length first. The bound is exact
    /// for a chain whose encoded size is fixed (no compression) and generous otherwise (twice
    /// the codecs' worst case, plus 1 MiB), so a chunk any real encoder wrote is never refused.
    fn stored_size_limit(&self) -> u64 {
        const SLACK: u64 = 1 << 20;
        match self.chain().fixed_encoded_size() {
            Some(exact) => exact,
            None => self.chain().max_encoded_size().saturating_mul(2).saturating_add(SLACK),
        }
    }

    /// Copy one read piece into its box of `dst` (a buffer of `dst_shape` starting at array row
    /// `row0` and at `offset` in the other dimensions).
    fn place(&self, part: &Part, piece: ReadPiece, dst: &mut [u8], offset: &[u64], dst_shape: &[u64], row0: u64) {
        let elem = self.data_type().size();
        let start = dst_start(part, offset, row0);
        let dst_box = BoxIn { shape: dst_shape, start: &start };
        match piece {
            ReadPiece::Chunk(chunk) => self.place_chunk(part, &chunk, dst, offset, dst_shape, row0),
            ReadPiece::Box(data) => {
                let zero = vec![0; part.size.len()];
                copy_box(&data, &BoxIn { shape: &part.size, start: &zero }, dst, &dst_box, &part.size, elem);
            }
            ReadPiece::Fill => fill_box(dst, &dst_box, &part.size, self.fill_value().as_le_bytes()),
        }
    }

    /// `place` for a whole decoded chunk.
    fn place_chunk(&self, part: &Part, chunk: &[u8], dst: &mut [u8], offset: &[u64], dst_shape: &[u64], row0: u64) {
        let start = dst_start(part, offset, row0);
        let in_chunk = offset_in_cell(&part.lo, &part.coords, self.chunk_shape());
        let (src, dst_box) =
            (BoxIn { shape: self.chunk_shape(), start: &in_chunk }, BoxIn { shape: dst_shape, start: &start });
        copy_box(chunk, &src, dst, &dst_box, &part.size, self.data_type().size());
    }

    /// Read what `part` needs of one chunk: only the touched inner chunks of a shard when the
    /// region covers part of it, the whole chunk otherwise.
    fn read_piece(&self, part: &Part) -> Result<ReadPiece, Error> {
        if let Some(piece) = self.read_partial(part)? {
            return Ok(piece);
        }
        Ok(match self.read_chunk(&part.coords)? {
            Some(chunk) => ReadPiece::Chunk(chunk),
            None => ReadPiece::Fill,
        })
    }

    /// The touched inner chunks of a shard when the region covers part of it; `None` when the
    /// chunk is to be read whole.
    fn read_partial(&self, part: &Part) -> Result<Option<ReadPiece>, Error> {
        if !self.covers(part) && self.chain().supports_partial_decode() {
            let key = self.chunk_key(&part.coords);
            let Some(value_len) = self.store.size(&key)? else { return Ok(Some(ReadPiece::Fill)) };
            let in_chunk = offset_in_cell(&part.lo, &part.coords, self.chunk_shape());
            let store = self.store.as_ref();
            let mut fetch = |ranges: &[ByteRange]| -> Result<Option<Vec<Vec<u8>>>, Error> {
                let requests: Vec<(&str, ByteRange)> = ranges.iter().map(|r| (key.as_str(), *r)).collect();
                let got = store.get_partial_values(&requests)?;
                Ok(got.into_iter().collect::<Option<Vec<_>>>())
            };
            match self.chain().partial_decode(&mut fetch, &key, value_len, &in_chunk, &part.size)? {
                Partial::Unsupported => {}
                Partial::Absent => return Ok(Some(ReadPiece::Fill)),
                Partial::Data(data) => return Ok(Some(ReadPiece::Box(data))),
            }
        }
        Ok(None)
    }

    /// Write the region `offset..offset+shape` from C-order little-endian element bytes.
    /// Chunks the region covers only in part are read, patched and rewritten; a chunk that ends up
    /// holding only the fill value is erased instead of stored. Chunks are encoded in parallel.
    pub fn write_region_bytes(&self, offset: &[u64], shape: &[u64], bytes: &[u8]) -> Result<(), Error> {
        self.check_write(offset, shape, bytes)?;
        if !self.metadata.is_regular() {
            return self.write_region_rectilinear(offset, shape, bytes);
        }
        if self.write_streamed(offset, shape, bytes)? {
            return Ok(());
        }
        self.scoped_data(|a| a.write_region_unscoped(offset, shape, bytes))
    }

    /// Check a region write before any chunk is touched.
    fn check_write(&self, offset: &[u64], shape: &[u64], bytes: &[u8]) -> Result<(), Error> {
        self.require_fixed_size()?;
        // A chunk that ends up holding only the fill value is erased without encoding, so a
        // chain that cannot run would otherwise fail half-way, and inside a transaction the
        // erasures before the failure would commit with it.
        self.check_codecs()?;
        let nbytes = self.check_region(offset, shape)?;
        if bytes.len() != nbytes {
            return Err(ArrayError::BufferLength {
                array: self.path.to_string(),
                expected: nbytes as u64,
                given: bytes.len() as u64,
            }
            .into());
        }
        Ok(())
    }

    pub(super) fn write_region_unscoped(&self, offset: &[u64], shape: &[u64], bytes: &[u8]) -> Result<(), Error> {
        self.check_write(offset, shape, bytes)?;
        if !self.metadata.is_regular() {
            return self.write_region_rectilinear(offset, shape, bytes);
        }
        let parts = self.parts(offset, shape);
        if self.parts_are_cheap(parts.len()) {
            return parts.iter().try_for_each(|part| self.write_part(part, offset, shape, bytes));
        }
        parts.par_iter().try_for_each(|part| self.write_part(part, offset, shape, bytes))
    }

    /// Whether reading or read-modify-writing `parts` chunks is too little work to hand to the
    /// pool: a few chunks without compression are a few memory copies each, less than waking a
    /// pool thread and joining it costs, and a thread of its own per caller scales better than
    /// callers that all queue their chunks on the one pool. Compressed chunks up to 1 MiB in all
    /// stay too: decoding or encoding them takes a few hundred microseconds, and the pool's idle
    /// workers spin (yielding the CPU) after each such job, taking the cores the callers' other
    /// threads need. docs/benchmarks.md, "Group commit wake-ups" (`zarrdb bench --workload
    /// concurrent_unaligned`) and stop 29's section (region reads on the calling thread).
    pub(super) fn parts_are_cheap(&self, parts: usize) -> bool {
        const MAX_PARTS: usize = 4;
        const MAX_BYTES: u64 = 4 << 20;
        const MAX_CODED_BYTES: u64 = 1 << 20;
        let bytes = self.chunk_spec().num_bytes().saturating_mul(parts as u64);
        let limit = if self.chain.fixed_encoded_size().is_some() { MAX_BYTES } else { MAX_CODED_BYTES };
        parts <= MAX_PARTS && bytes <= limit
    }

    fn write_part(&self, part: &Part, offset: &[u64], shape: &[u64], bytes: &[u8]) -> Result<(), Error> {
        let chunk_shape = self.chunk_shape();
        let key = self.chunk_key(&part.coords);
        if part.size == chunk_shape {
            // The region holds the whole chunk: gather it directly; nothing stored is read.
            let in_region: Vec<u64> = part.lo.iter().zip(offset).map(|(l, o)| l - o).collect();
            let src = BoxIn { shape, start: &in_region };
            let chunk = region::gather_box(bytes, &src, chunk_shape, self.data_type().size());
            return self.store_chunk_if_unchanged(&key, None, chunk).map(drop);
        }
        if self.covers(part) {
            // An edge chunk written whole: its padding takes the fill value.
            let mut chunk = self.fill_chunk()?;
            self.patch_chunk(part, offset, shape, bytes, &mut chunk);
            return self.store_chunk_if_unchanged(&key, None, chunk).map(drop);
        }
        self.read_modify_write(&key, |chunk| self.patch_chunk(part, offset, shape, bytes, chunk))
    }

    /// Read the chunk under `key` (the fill value when not stored), change it with `patch` and
    /// store it, only if no other writer stored the chunk meanwhile (`chunk_sync`); otherwise
    /// read it again and patch it anew.
    pub(super) fn read_modify_write(&self, key: &str, patch: impl Fn(&mut [u8])) -> Result<(), Error> {
        loop {
            let seen = chunk_sync::seen(&self.synchronizer, self.store.chunk_versions(Sealed::new()), key);
            let (mut chunk, read) = match self.read_chunk_for_update(key)? {
                Some(stored) => stored,
                None => (self.fill_chunk()?, None),
            };
            patch(&mut chunk);
            if self.store_chunk_if_unchanged(key, seen.map(|v| (v, read)), chunk)? {
                return Ok(());
            }
        }
    }

    /// Copies what the region (`bytes`, of `shape` at `offset`) holds of `part` into `chunk`, the
    /// whole decoded chunk; the rest of `chunk` stays as it is.
    pub(super) fn patch_chunk(&self, part: &Part, offset: &[u64], shape: &[u64], bytes: &[u8], chunk: &mut [u8]) {
        let chunk_shape = self.chunk_shape();
        let in_chunk = offset_in_cell(&part.lo, &part.coords, chunk_shape);
        let in_region: Vec<u64> = part.lo.iter().zip(offset).map(|(l, o)| l - o).collect();
        let src = BoxIn { shape, start: &in_region };
        let dst = BoxIn { shape: chunk_shape, start: &in_chunk };
        copy_box(bytes, &src, chunk, &dst, &part.size, self.data_type().size());
    }

    /// `chunk` (the decoded chunk under `key`) encoded for storing, or `None` when it holds only
    /// the fill value: such a chunk is stored as no value.
    pub(super) fn encode_unless_fill<'c>(
        &self,
        key: &str,
        chunk: impl Into<std::borrow::Cow<'c, [u8]>>,
    ) -> Result<Option<Vec<u8>>, Error> {
        let chunk = chunk.into();
        let only_fill = if self.data_type().is_variable_length() {
            self.items_are_fill(&chunk, key)?
        } else {
            region::is_all(&chunk, self.fill_value().as_le_bytes())
        };
        if only_fill {
            return Ok(None);
        }
        let encoded = self.chain().encode(chunk).map_err(|source| Error::Codec { key: key.to_owned(), source })?;
        Ok(Some(encoded))
    }

    /// The decoded chunk under `key` for a read-modify-write, and the fingerprint of its stored
    /// value where the synchronizer compares it at store time (`None` otherwise); `None` when not
    /// stored.
    pub(super) fn read_chunk_for_update(&self, key: &str) -> Result<Option<(Vec<u8>, Fingerprint)>, Error> {
        let compared = matches!(*self.synchronizer, Synchronizer::Processes { .. });
        let stored = self.with_stored_chunk(key, |encoded| {
            (self.chain().decode(encoded), if compared { fingerprint(Some(encoded)) } else { None })
        })?;
        let Some((decoded, read)) = stored else { return Ok(None) };
        let decoded = decoded.map_err(|source| Error::Codec { key: key.to_owned(), source })?;
        Ok(Some((decoded, read)))
    }

    /// A chunk holding only the fill value; refused above `MAX_CHUNK_BYTES`, as decoding is.
    pub(super) fn fill_chunk(&self) -> Result<Vec<u8>, Error> {
        let spec = self.chunk_spec();
        crate::codec::check_chunk_size(&spec)
            .map_err(|source| Error::Codec { key: self.path.metadata_key(), source })?;
        let mut buf = vec![0u8; spec.num_bytes() as usize];
        region::fill(&mut buf, spec.fill_value.as_le_bytes());
        Ok(buf)
    }

    /// Read a region into typed elements.
    pub fn read_region<T: Element>(&self, offset: &[u64], shape: &[u64]) -> Result<Vec<T>, Error> {
        self.check_element::<T>()?;
        Ok(T::from_le_bytes(&self.read_region_bytes(offset, shape)?))
    }

    /// Write typed elements into a region.
    pub fn write_region<T: Element>(&self, offset: &[u64], shape: &[u64], values: &[T]) -> Result<(), Error> {
        self.check_element::<T>()?;
        self.write_region_bytes(offset, shape, &T::to_le_bytes(values))
    }

    /// Read the whole array into typed elements.
    pub fn read_all<T: Element>(&self) -> Result<Vec<T>, Error> {
        let zeros = vec![0; self.shape().len()];
        self.read_region(&zeros, self.shape())
    }

    pub(super) fn check_element<T: Element>(&self) -> Result<(), Error> {
        if T::matches(self.data_type()) {
            Ok(())
        } else {
            Err(ArrayError::ElementType {
                array: self.path.to_string(),
                data_type: self.data_type().name(),
                requested: std::any::type_name::<T>(),
            }
            .into())
        }
    }

    /// Encode one whole chunk (C-order little-endian element bytes at the full chunk shape) with
    /// the array's codec chain, exactly as it would be stored.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// let a = Array::create(store, "/a", ArrayMetadata::new(DataType::UInt16, vec![4], vec![2])).unwrap();
    /// let encoded = a.encode_chunk(&[1, 0, 2, 0]).unwrap();
    /// assert_eq!(a.decode_chunk(encoded).unwrap(), vec![1, 0, 2, 0]);
    /// assert_eq!(a.decode_chunk(&[1, 0, 2, 0][..]).unwrap(), vec![1, 0, 2, 0]);
    /// assert!(a.decode_chunk(vec![1, 2, 3]).is_err(), "a chunk of the wrong size is refused");
    /// ```
    pub fn encode_chunk(&self, decoded: &[u8]) -> Result<Vec<u8>, Error> {
        self.require_regular("encode_chunk")?;
        let expected = self.chunk_spec().num_bytes();
        if decoded.len() as u64 != expected {
            return Err(ArrayError::BufferLength {
                array: self.path.to_string(),
                expected,
                given: decoded.len() as u64,
            }
            .into());
        }
        self.chain().encode(decoded).map_err(|source| Error::Codec { key: self.path.metadata_key(), source })
    }

    /// Decode one stored chunk value into C-order little-endian element bytes at the full chunk
    /// shape; sizes and checksums are verified. The value may be owned (`Vec<u8>`), which lets a
    /// chain without compression hand it back without a copy, or borrowed (`&[u8]`).
    pub fn decode_chunk<'a>(&self, encoded: impl Into<std::borrow::Cow<'a, [u8]>>) -> Result<Vec<u8>, Error> {
        self.require_regular("decode_chunk")?;
        self.chain().decode(encoded).map_err(|source| Error::Codec { key: self.path.metadata_key(), source })
    }

    /// The decoded chunk at `coords`, or `None` when it is not stored.
    pub(crate) fn read_chunk(&self, coords: &[u64]) -> Result<Option<Vec<u8>>, Error> {
        if !self.metadata.is_regular() {
            return self.read_chunk_rectilinear(coords);
        }
        let key = self.chunk_key(coords);
        let Some(decoded) = self.with_stored_chunk(&key, |encoded| self.chain().decode(encoded))? else {
            return Ok(None);
        };
        Ok(Some(decoded.map_err(|source| Error::Codec { key, source })?))
    }

    /// Encode and store a decoded chunk under `key`, or erase it when it holds only the fill
    /// value, unless another writer stored the chunk since version `seen` (`chunk_sync`); `false`
    /// when nothing was stored. Encoding happens first, outside any lock.
    pub(super) fn store_chunk_if_unchanged(
        &self,
        key: &str,
        seen: Option<(u64, Fingerprint)>,
        chunk: Vec<u8>,
    ) -> Result<bool, Error> {
        let encoded = self.encode_unless_fill(key, chunk)?;
        if seen.is_none() && self.store.bumps_chunk_versions_at_commit(Sealed::new()) {
            // A whole-chunk write in a data scope: nothing to check, and the commit bumps the
            // chunk's counter once the value is visible.
            match encoded {
                Some(encoded) => self.store.set_owned(key, encoded)?,
                None => self.store.erase(key)?,
            }
            return Ok(true);
        }
        let (seen, read) = (seen.map(|s| s.0), seen.and_then(|s| s.1));
        if seen.is_some_and(|seen| self.store.defer_chunk_check(key, seen, Sealed::new())) {
            // The store checks `seen` when it commits (an auto-commit region write).
            match encoded {
                Some(encoded) => self.store.set_owned(key, encoded)?,
                None => self.store.erase(key)?,
            }
            return Ok(true);
        }
        let still_as_read = || Ok(fingerprint(self.store.get(key)?.as_deref()) == read);
        chunk_sync::store_if_unchanged(
            &self.synchronizer,
            self.store.chunk_versions(Sealed::new()),
            key,
            seen,
            still_as_read,
            || match encoded {
                Some(encoded) => Ok(self.store.set_owned(key, encoded)?),
                None => Ok(self.store.erase(key)?),
            },
        )
    }
}

/// Where `part` starts in a buffer whose first row is array row `row0` and which starts at
/// `offset` in the other dimensions.
fn dst_start(part: &Part, offset: &[u64], row0: u64) -> Vec<u64> {
    (0..part.lo.len()).map(|d| part.lo[d] - if d == 0 { row0 } else { offset[d] }).collect()
}

/// The failure of a chunk stored longer than its array's codecs produce.
fn stored_too_large(key: String, stored: u64, limit: u64) -> Error {
    Error::Codec { key, source: crate::error::CodecError::StoredTooLarge { stored, limit } }
}
