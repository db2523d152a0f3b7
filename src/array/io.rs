//! Reading and writing n-d regions: split into chunks, decode/encode, copy boxes.

use super::region::{self, chunk_ranges, copy_box, fill_box, for_each_index, BoxIn};
use super::{Array, Element};
use crate::error::{ArrayError, Error};

impl Array {
    /// Check a region against the array and return its size in bytes.
    fn check_region(&self, offset: &[u64], shape: &[u64]) -> Result<usize, Error> {
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
        let elements: u128 = shape.iter().map(|&s| s as u128).product();
        let bytes = elements * self.data_type().size() as u128;
        usize::try_from(bytes)
            .ok()
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| ArrayError::TooLarge { array: array(), elements }.into())
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
        let nbytes = self.check_region(offset, shape)?;
        let mut out = vec![0u8; nbytes];
        let spec = self.chunk_spec();
        let elem = spec.data_type.size();
        let chunk_shape = self.chunk_shape();
        let mut result = Ok(());
        for_each_index(&chunk_ranges(offset, shape, chunk_shape), |coords| {
            if result.is_err() {
                return;
            }
            let (lo, size) = intersect(coords, chunk_shape, offset, shape);
            let out_start: Vec<u64> = lo.iter().zip(offset).map(|(l, o)| l - o).collect();
            let dst = BoxIn { shape, start: &out_start };
            result = (|| {
                match self.read_chunk(coords)? {
                    Some(chunk) => {
                        let in_chunk: Vec<u64> =
                            lo.iter().zip(coords).zip(chunk_shape).map(|((l, c), cs)| l - c * cs).collect();
                        copy_box(&chunk, &BoxIn { shape: chunk_shape, start: &in_chunk }, &mut out, &dst, &size, elem);
                    }
                    None => fill_box(&mut out, &dst, &size, spec.fill_value.as_le_bytes()),
                }
                Ok(())
            })();
        });
        result.map(|()| out)
    }

    /// Write the region `offset..offset+shape` from C-order little-endian element bytes.
    /// Chunks the region covers only in part are read, patched and rewritten; a chunk that ends up
    /// holding only the fill value is erased instead of stored.
    pub fn write_region_bytes(&self, offset: &[u64], shape: &[u64], bytes: &[u8]) -> Result<(), Error> {
        let nbytes = self.check_region(offset, shape)?;
        if bytes.len() != nbytes {
            return Err(ArrayError::BufferLength {
                array: self.path.to_string(),
                expected: nbytes as u64,
                given: bytes.len() as u64,
            }
            .into());
        }
        let spec = self.chunk_spec();
        let elem = spec.data_type.size();
        let fill = spec.fill_value.as_le_bytes();
        let chunk_shape = self.chunk_shape();
        let chunk_bytes = spec.num_bytes() as usize;
        let array_shape = self.shape();
        let mut result = Ok(());
        for_each_index(&chunk_ranges(offset, shape, chunk_shape), |coords| {
            if result.is_err() {
                return;
            }
            let (lo, size) = intersect(coords, chunk_shape, offset, shape);
            // The region covers the chunk when it covers the chunk's part inside the array; the
            // rest of an edge chunk is padding and holds the fill value.
            let covers = (0..coords.len()).all(|d| {
                let origin = coords[d] * chunk_shape[d];
                lo[d] == origin && lo[d] + size[d] == (origin + chunk_shape[d]).min(array_shape[d])
            });
            result = (|| {
                let mut chunk = if covers {
                    let mut buf = vec![0u8; chunk_bytes];
                    if size != chunk_shape {
                        region::fill(&mut buf, fill);
                    }
                    buf
                } else {
                    match self.read_chunk(coords)? {
                        Some(existing) => existing,
                        None => {
                            let mut buf = vec![0u8; chunk_bytes];
                            region::fill(&mut buf, fill);
                            buf
                        }
                    }
                };
                let in_chunk: Vec<u64> =
                    lo.iter().zip(coords).zip(chunk_shape).map(|((l, c), cs)| l - c * cs).collect();
                let in_region: Vec<u64> = lo.iter().zip(offset).map(|(l, o)| l - o).collect();
                copy_box(
                    bytes,
                    &BoxIn { shape, start: &in_region },
                    &mut chunk,
                    &BoxIn { shape: chunk_shape, start: &in_chunk },
                    &size,
                    elem,
                );
                self.store_chunk(coords, chunk)
            })();
        });
        result
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

    fn check_element<T: Element>(&self) -> Result<(), Error> {
        if T::DATA_TYPE == self.data_type() {
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

    /// The decoded chunk at `coords`, or `None` when it is not stored.
    pub(crate) fn read_chunk(&self, coords: &[u64]) -> Result<Option<Vec<u8>>, Error> {
        let key = self.chunk_key(coords);
        let Some(encoded) = self.store.get(&key)? else { return Ok(None) };
        let decoded =
            self.chain().decode(encoded, &self.chunk_spec()).map_err(|source| Error::Codec { key, source })?;
        Ok(Some(decoded))
    }

    /// Encode and store a decoded chunk, or erase it when it holds only the fill value.
    fn store_chunk(&self, coords: &[u64], chunk: Vec<u8>) -> Result<(), Error> {
        let key = self.chunk_key(coords);
        if region::is_all(&chunk, self.fill_value().as_le_bytes()) {
            self.store.erase(&key)?;
            return Ok(());
        }
        let encoded = self
            .chain()
            .encode(chunk, &self.chunk_spec())
            .map_err(|source| Error::Codec { key: key.clone(), source })?;
        self.store.set(&key, &encoded)?;
        Ok(())
    }
}

/// The part of chunk `coords` inside the region: its lower corner (array coordinates) and size.
fn intersect(coords: &[u64], chunk_shape: &[u64], offset: &[u64], shape: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let mut lo = Vec::with_capacity(coords.len());
    let mut size = Vec::with_capacity(coords.len());
    for d in 0..coords.len() {
        let origin = coords[d] * chunk_shape[d];
        let start = origin.max(offset[d]);
        let end = (origin + chunk_shape[d]).min(offset[d] + shape[d]);
        lo.push(start);
        size.push(end - start);
    }
    (lo, size)
}
