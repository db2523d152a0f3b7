//! Writes of elements scattered over chunks: each chunk's elements named by their positions in
//! the chunk, not by a box.
//!
//! A selection with steps, integer arrays, coordinates or a mask touches elements no box
//! describes; zarr-python computes which elements of each chunk it sets, and
//! `zarrdb.CodecPipeline` hands them here so that the engine does the read-modify-write of
//! each chunk, as it does for boxes: the chunks of one call commit together (one atomic commit
//! on a database's auto-commit store), a chunk another writer stored after it was read is read
//! and patched again, and so no concurrent update of other elements of a shared chunk is lost.

use rayon::prelude::*;
use std::collections::HashMap;

use super::Array;
use crate::error::{ArrayError, Error};

/// The elements one chunk takes in [`Array::write_scattered`].
#[derive(Clone, Copy, Debug)]
pub struct ChunkElements<'a> {
    /// The chunk's coordinates in the chunk grid.
    pub coords: &'a [u64],
    /// Flat C-order positions of the elements in the chunk (at the chunk's full shape, as edge
    /// chunks are stored: on a rectilinear grid, its own edges), or `None` for the whole chunk: then `values` holds every element of
    /// the chunk, its padding past the array's edge included, and nothing stored is read.
    pub indices: Option<&'a [u64]>,
    /// The elements as little-endian bytes, in the order of `indices`. A position given twice
    /// takes its last value.
    pub values: &'a [u8],
}

/// The writes of one chunk, in the caller's order.
pub(super) struct ChunkWrites<'a> {
    pub key: String,
    pub writes: Vec<ChunkElements<'a>>,
}

impl Array {
    /// Set the given elements of each listed chunk; every other element keeps its stored value
    /// (the fill value where the chunk is not stored). A chunk that ends up holding only the fill
    /// value is erased instead of stored.
    ///
    /// Atomic as [`Array::write_region_bytes`] is: one commit on a database's auto-commit store
    /// (or part of the transaction on a transaction's store), and a chunk read for the update
    /// that another writer (thread or process) stores meanwhile is read and patched again, so
    /// concurrent writers of other elements of the same chunks lose nothing. Chunks listed more
    /// than once take their writes in order. On a rectilinear grid each chunk has its own edges
    /// and the chunks are read-modify-written inside one write scope (a write transaction on a
    /// database), as rectilinear region writes are: on a store without transactions concurrent
    /// writers of one chunk can lose an update there.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Array, ArrayMetadata, ChunkElements, DataType, MemoryStore, Store};
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// let a = Array::create(store, "/a", ArrayMetadata::new(DataType::UInt8, vec![6], vec![3])).unwrap();
    /// // a[1::2] = [7, 8, 9]: element 1 of chunk 0, elements 0 and 2 of chunk 1.
    /// a.write_scattered(&[
    ///     ChunkElements { coords: &[0], indices: Some(&[1]), values: &[7] },
    ///     ChunkElements { coords: &[1], indices: Some(&[0, 2]), values: &[8, 9] },
    /// ])
    /// .unwrap();
    /// assert_eq!(a.read_region::<u8>(&[0], &[6]).unwrap(), [0, 7, 0, 8, 0, 9]);
    /// ```
    pub fn write_scattered(&self, chunks: &[ChunkElements<'_>]) -> Result<(), Error> {
        self.require_fixed_size()?;
        // Erasing a chunk left holding the fill value needs no codec: a chain that cannot run
        // must fail before anything is written (as for region writes).
        self.check_codecs()?;
        for chunk in chunks {
            self.check_chunk_elements(chunk)?;
        }
        let grouped = self.group_by_chunk(chunks);
        if grouped.is_empty() {
            return Ok(());
        }
        if !self.metadata.is_regular() {
            return self.write_scattered_rectilinear(&grouped);
        }
        self.scoped_data(|a| {
            if a.parts_are_cheap(grouped.len()) {
                grouped.iter().try_for_each(|chunk| a.write_chunk_elements(chunk))
            } else {
                grouped.par_iter().try_for_each(|chunk| a.write_chunk_elements(chunk))
            }
        })
    }

    /// Refuse elements that are not inside the array (a chunk outside the grid, a position
    /// outside the chunk or in its padding past the array's edge) or values of another length.
    fn check_chunk_elements(&self, chunk: &ChunkElements<'_>) -> Result<(), Error> {
        let shape = self.shape();
        let array = || self.path.to_string();
        if chunk.coords.len() != shape.len() {
            return Err(
                ArrayError::RankMismatch { array: array(), expected: shape.len(), given: chunk.coords.len() }.into()
            );
        }
        let grid = self.metadata.grid_shape();
        if chunk.coords.iter().zip(&grid).any(|(c, g)| c >= g) {
            return Err(self.outside(format!("chunk {:?}", chunk.coords)));
        }
        let (origin, chunk_shape) = self.metadata.chunk(chunk.coords);
        let chunk_shape = &chunk_shape[..];
        // Elements of the chunk inside the array, per dimension (fewer than the chunk's at an edge).
        let extent: Vec<u64> = (0..shape.len()).map(|d| (shape[d] - origin[d]).min(chunk_shape[d])).collect();
        let element_size = self.data_type().size() as u64;
        let chunk_bytes = chunk_shape.iter().product::<u64>().saturating_mul(element_size);
        let expected = match chunk.indices {
            None => chunk_bytes,
            Some(indices) => {
                let at_edge = extent.iter().zip(chunk_shape).any(|(e, k)| e < k);
                let elements = chunk_bytes / element_size.max(1);
                for &index in indices {
                    if index >= elements || (at_edge && !inside(index, chunk_shape, &extent)) {
                        return Err(self.outside(format!("element {index} of chunk {:?}", chunk.coords)));
                    }
                }
                (indices.len() as u64).saturating_mul(element_size)
            }
        };
        if chunk.values.len() as u64 != expected {
            return Err(ArrayError::BufferLength { array: array(), expected, given: chunk.values.len() as u64 }.into());
        }
        Ok(())
    }

    fn outside(&self, what: String) -> Error {
        ArrayError::OutOfBounds { array: self.path.to_string(), region: what, shape: self.shape().to_vec() }.into()
    }

    /// The writes grouped by chunk, each chunk where it is first listed.
    pub(super) fn group_by_chunk<'a>(&self, chunks: &[ChunkElements<'a>]) -> Vec<ChunkWrites<'a>> {
        let mut grouped: Vec<ChunkWrites<'a>> = Vec::new();
        let mut position: HashMap<&[u64], usize> = HashMap::new();
        for chunk in chunks {
            match position.get(chunk.coords) {
                Some(&i) => grouped[i].writes.push(*chunk),
                None => {
                    position.insert(chunk.coords, grouped.len());
                    grouped.push(ChunkWrites { key: self.chunk_key(chunk.coords), writes: vec![*chunk] });
                }
            }
        }
        grouped
    }

    /// Apply one chunk's writes: from the last whole-chunk write on without reading the chunk,
    /// else as a read-modify-write.
    fn write_chunk_elements(&self, chunk: &ChunkWrites<'_>) -> Result<(), Error> {
        let element_size = self.data_type().size();
        let apply = |data: &mut [u8], writes: &[ChunkElements<'_>]| {
            for write in writes {
                if let Some(indices) = write.indices {
                    scatter(data, indices, write.values, element_size);
                }
            }
        };
        match chunk.writes.iter().rposition(|w| w.indices.is_none()) {
            Some(whole) => {
                let mut data = chunk.writes[whole].values.to_vec();
                apply(&mut data, &chunk.writes[whole + 1..]);
                self.store_chunk_if_unchanged(&chunk.key, None, data).map(drop)
            }
            None => self.read_modify_write(&chunk.key, |data| apply(data, &chunk.writes)),
        }
    }
}

/// Whether the flat C-order position `index` of a chunk of `chunk_shape` lies within `extent`
/// (the part of the chunk inside the array).
fn inside(mut index: u64, chunk_shape: &[u64], extent: &[u64]) -> bool {
    for d in (0..chunk_shape.len()).rev() {
        if index % chunk_shape[d] >= extent[d] {
            return false;
        }
        index /= chunk_shape[d];
    }
    true
}

/// Copy element `i` of `values` to position `indices[i]` of `chunk` (positions checked against
/// the chunk by `check_chunk_elements`).
pub(super) fn scatter(chunk: &mut [u8], indices: &[u64], values: &[u8], element_size: usize) {
    for (&index, value) in indices.iter().zip(values.chunks_exact(element_size.max(1))) {
        let at = index as usize * element_size;
        chunk[at..at + element_size].copy_from_slice(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ArrayMetadata, DataType, MemoryStore, Store};
    use std::sync::Arc;

    fn array(shape: Vec<u64>, chunks: Vec<u64>) -> Array {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        Array::create(store, "/a", ArrayMetadata::new(DataType::UInt16, shape, chunks)).unwrap()
    }

    fn le(values: &[u16]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn positions_outside_the_array_are_refused_before_anything_is_written() {
        // A (5, 3) array in (2, 2) chunks: chunk (2, 1) holds only element (4, 2), position 0.
        let a = array(vec![5, 3], vec![2, 2]);
        let one = le(&[1]);
        let good = ChunkElements { coords: &[0, 0], indices: Some(&[3]), values: &one };
        for bad in [
            ChunkElements { coords: &[2, 1], indices: Some(&[1]), values: &one }, // padding
            ChunkElements { coords: &[2, 1], indices: Some(&[4]), values: &one }, // past the chunk
            ChunkElements { coords: &[3, 0], indices: Some(&[0]), values: &one }, // past the grid
            ChunkElements { coords: &[0], indices: Some(&[0]), values: &one },    // rank
            ChunkElements { coords: &[0, 0], indices: Some(&[0, 1]), values: &one }, // values
            ChunkElements { coords: &[0, 0], indices: None, values: &one },       // a whole chunk
        ] {
            assert!(matches!(a.write_scattered(&[good, bad]), Err(Error::Array(_))), "{bad:?}");
        }
        assert_eq!(a.stored_chunks().unwrap(), vec![], "nothing was written");
        let edge = ChunkElements { coords: &[2, 1], indices: Some(&[0]), values: &one };
        a.write_scattered(&[good, edge]).unwrap();
        assert_eq!(a.read_region::<u16>(&[0, 0], &[5, 3]).unwrap(), [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn writes_of_one_chunk_apply_in_order() {
        let a = array(vec![4], vec![4]);
        let (first, whole, last) = (le(&[5, 6]), le(&[1, 2, 3, 4]), le(&[9, 8]));
        a.write_scattered(&[
            ChunkElements { coords: &[0], indices: Some(&[0, 1]), values: &first },
            ChunkElements { coords: &[0], indices: None, values: &whole },
            ChunkElements { coords: &[0], indices: Some(&[3, 3]), values: &last },
        ])
        .unwrap();
        assert_eq!(a.read_region::<u16>(&[0], &[4]).unwrap(), [1, 2, 3, 8]);
        a.write_scattered(&[ChunkElements { coords: &[0], indices: Some(&[2]), values: &le(&[0]) }]).unwrap();
        assert_eq!(a.read_region::<u16>(&[0], &[4]).unwrap(), [1, 2, 0, 8]);
    }
}
