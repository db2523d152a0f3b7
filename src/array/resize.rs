//! Resizing and appending, each one atomic step.
//!
//! A resize rewrites `zarr.json` with the new shape and brings the chunks in line with it: chunks
//! wholly outside the new shape are erased, and in chunks that straddle the boundary everything
//! beyond the part that stays valid (inside both the old and the new shape) is reset to the fill
//! value. So a region cut off by a shrink and regrown later reads as the fill value, never as the
//! data that was there before. On a database store it all happens in one transaction.

use super::{chunk_sync, Array, Element};
use crate::codec::region::{self, BoxIn};
use crate::error::{ArrayError, Error};
use crate::metadata::ArrayMetadata;
use crate::store::Sealed;

impl Array {
    /// Change the shape (any dimension may grow or shrink), in one atomic step.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// let mut a = Array::create(store, "/a", ArrayMetadata::new(DataType::Int32, vec![6], vec![4]))?;
    /// a.write_region(&[0], &[6], &[1, 2, 3, 4, 5, 6])?;
    /// a.resize(&[3])?;
    /// a.resize(&[6])?;
    /// assert_eq!(a.read_all::<i32>()?, vec![1, 2, 3, 0, 0, 0]); // the regrown part is fill
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn resize(&mut self, shape: &[u64]) -> Result<(), Error> {
        let resized = self.with_shape(shape.to_vec())?;
        self.scoped(true, |a| a.resize_unscoped(&resized.metadata))?;
        *self = resized;
        Ok(())
    }

    /// Append C-order little-endian element bytes along `axis` (zarr-python's `append`): `shape`
    /// is the shape of the appended block, equal to the array's in every other dimension. The
    /// resize and the write are one atomic step. Returns the new shape.
    pub fn append_bytes(&mut self, axis: usize, shape: &[u64], bytes: &[u8]) -> Result<Vec<u64>, Error> {
        self.require_fixed_size()?;
        self.append_with(axis, shape, |grown, offset| grown.write_region_unscoped(offset, shape, bytes))
    }

    /// Append a block of `shape` along `axis`: checks the shapes, then resizes and runs `write`
    /// (on the grown array, at the block's offset) in one atomic step. Returns the new shape.
    pub(super) fn append_with(
        &mut self,
        axis: usize,
        shape: &[u64],
        write: impl Fn(&Array, &[u64]) -> Result<(), Error>,
    ) -> Result<Vec<u64>, Error> {
        let old = self.shape().to_vec();
        let mismatch = || ArrayError::AppendShape {
            array: self.path.to_string(),
            axis,
            array_shape: old.clone(),
            given: shape.to_vec(),
        };
        if shape.len() != old.len() || axis >= old.len() {
            return Err(mismatch().into());
        }
        if (0..old.len()).any(|d| d != axis && shape[d] != old[d]) {
            return Err(mismatch().into());
        }
        let mut new_shape = old.clone();
        new_shape[axis] = old[axis].checked_add(shape[axis]).ok_or_else(mismatch)?;
        let grown = self.with_shape(new_shape.clone())?;
        let mut offset = vec![0; old.len()];
        offset[axis] = old[axis];
        self.scoped(true, |a| {
            a.resize_unscoped(&grown.metadata)?;
            write(&Array { store: a.store.clone(), ..grown.clone() }, &offset)
        })?;
        *self = grown;
        Ok(new_shape)
    }

    /// [`Array::append_bytes`] with typed elements.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// let mut a = Array::create(store, "/rows", ArrayMetadata::new(DataType::Float32, vec![0, 3], vec![4, 3]))?;
    /// assert_eq!(a.append(0, &[1, 3], &[1.0f32, 2.0, 3.0])?, vec![1, 3]);
    /// assert_eq!(a.append(0, &[1, 3], &[4.0f32, 5.0, 6.0])?, vec![2, 3]);
    /// assert_eq!(a.read_all::<f32>()?, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn append<T: Element>(&mut self, axis: usize, shape: &[u64], values: &[T]) -> Result<Vec<u64>, Error> {
        self.check_element::<T>()?;
        self.append_bytes(axis, shape, &T::to_le_bytes(values))
    }

    /// This array's handle with another shape, checked.
    fn with_shape(&self, shape: Vec<u64>) -> Result<Array, Error> {
        if shape.len() != self.shape().len() {
            return Err(ArrayError::RankMismatch {
                array: self.path.to_string(),
                expected: self.shape().len(),
                given: shape.len(),
            }
            .into());
        }
        // A rectilinear grid grows an edge to cover a longer dimension, as zarr-python 3.4 does.
        let metadata = self.metadata.resized(shape);
        let key = self.path.metadata_key();
        metadata.check().map_err(|source| Error::Metadata { key: key.clone(), source })?;
        if metadata.chunk_shape == self.metadata.chunk_shape {
            return Ok(Array { metadata, ..self.clone() });
        }
        // A new, longer edge: the array's chain is that of its largest chunk.
        let chain = super::codec_chain(&metadata).map_err(|source| Error::Codec { key, source })?;
        Ok(Array { metadata, chain: std::sync::Arc::new(chain), ..self.clone() })
    }

    fn resize_unscoped(&self, new: &ArrayMetadata) -> Result<(), Error> {
        if !self.metadata.is_regular() {
            return self.resize_rectilinear(new);
        }
        let old = &self.metadata.shape;
        let keep: Vec<u64> = old.iter().zip(&new.shape).map(|(o, n)| *o.min(n)).collect();
        let shrinks = new.shape.iter().zip(old).any(|(n, o)| n < o);
        let exposed = self.exposed_boundaries(&new.shape);
        if shrinks || !exposed.is_empty() {
            // Only stored chunks can need a change, and the listing finds them: the cost follows
            // what is stored, never the grid (a grown dimension's boundary slab of an array with
            // a long other dimension holds more chunks than memory could list).
            for (_, coords) in self.stored_chunk_coords_unscoped()? {
                if shrinks || exposed.iter().any(|&(d, index)| coords[d] == index) {
                    self.trim_chunk(&coords, &keep)?;
                }
            }
        }
        self.store.set(&self.path.metadata_key(), &new.to_json_bytes())?;
        Ok(())
    }

    /// The chunk boundaries a growth exposes, as (dimension, chunk index along it): the chunks
    /// holding the old edge along a growing dimension whose length was not a whole number of
    /// chunks. Their padding beyond the old edge becomes part of the array, so it is reset to
    /// the fill value where a chunk is stored.
    fn exposed_boundaries(&self, new_shape: &[u64]) -> Vec<(usize, u64)> {
        let (old, chunk) = (self.shape(), self.chunk_shape());
        (0..old.len())
            .filter(|&d| new_shape[d] > old[d] && old[d] % chunk[d] != 0)
            .map(|d| (d, old[d] / chunk[d]))
            .collect()
    }

    /// Erase the chunk at `coords` if it lies beyond `keep`, or reset its part beyond `keep` to
    /// the fill value if it straddles it.
    fn trim_chunk(&self, coords: &[u64], keep: &[u64]) -> Result<(), Error> {
        let chunk = self.chunk_shape();
        let lo: Vec<u64> = coords.iter().zip(chunk).map(|(c, s)| c * s).collect();
        let key = self.chunk_key(coords);
        if lo.iter().zip(keep).any(|(l, k)| l >= k) {
            // Through the chunk versions, so a partial write of this chunk in flight retries
            // (and finds the chunk outside the array) instead of storing it again.
            chunk_sync::store_if_unchanged(
                &self.synchronizer,
                self.store.chunk_versions(Sealed::new()),
                &key,
                None,
                || Ok(true),
                || Ok(self.store.erase(&key)?),
            )?;
            return Ok(());
        }
        let kept: Vec<u64> = (0..chunk.len()).map(|d| chunk[d].min(keep[d] - lo[d])).collect();
        if kept == chunk {
            return Ok(());
        }
        let spec = self.chunk_spec();
        let zero = vec![0; chunk.len()];
        let whole = BoxIn { shape: chunk, start: &zero };
        loop {
            let seen = chunk_sync::seen(&self.synchronizer, self.store.chunk_versions(Sealed::new()), &key);
            let Some((stored, read)) = self.read_chunk_for_update(&key)? else { return Ok(()) };
            let trimmed = if spec.data_type.is_variable_length() {
                self.trim_items(&stored, &kept, &key)?
            } else {
                let mut trimmed = self.fill_chunk()?;
                region::copy_box(&stored, &whole, &mut trimmed, &whole, &kept, spec.data_type.size());
                trimmed
            };
            if self.store_chunk_if_unchanged(&key, seen.map(|v| (v, read)), trimmed)? {
                return Ok(());
            }
        }
    }
}
