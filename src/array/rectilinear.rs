//! Region I/O on arrays with a rectilinear chunk grid, where each chunk has its own shape.
//!
//! Kept apart from the regular paths (`io`), which stay specialised on one chunk shape and one
//! codec chain: here every chunk gets the codec chain of its own shape, is decoded whole, and a
//! write read-modify-writes each touched chunk inside one write scope of the store (a write
//! transaction on a database in auto-commit mode).

use super::Array;
use crate::codec::region::{self, copy_box, fill_box, for_each_index, BoxIn};
use crate::codec::{ChunkSpec, CodecChain};
use crate::error::{ArrayError, Error};

/// The codec chain of one chunk: the array's, or one built for the chunk's shape.
enum Chain<'a> {
    Array(&'a CodecChain),
    Built(CodecChain),
}

impl std::ops::Deref for Chain<'_> {
    type Target = CodecChain;

    fn deref(&self) -> &CodecChain {
        match self {
            Chain::Array(chain) => chain,
            Chain::Built(chain) => chain,
        }
    }
}

/// One chunk a region touches: its coordinates, its origin and full edges, and the touched box.
struct Touched {
    coords: Vec<u64>,
    origin: Vec<u64>,
    edges: Vec<u64>,
    lo: Vec<u64>,
    size: Vec<u64>,
}

impl Array {
    /// Refuse `operation` on an array whose grid is not regular (the operations that have no
    /// rectilinear path yet).
    pub(super) fn require_regular(&self, operation: &'static str) -> Result<(), Error> {
        if self.metadata.is_regular() {
            return Ok(());
        }
        Err(ArrayError::RectilinearUnsupported { array: self.path.to_string(), operation }.into())
    }

    /// The codec chain of a chunk of `edges` (the array's own chain when they are its chunk
    /// shape).
    fn chain_for(&self, edges: &[u64]) -> Result<Chain<'_>, Error> {
        if edges == self.chunk_shape() {
            return Ok(Chain::Array(self.chain()));
        }
        let spec = self.spec_for(edges);
        let chain = CodecChain::from_metadata(&self.metadata.codecs, &spec)
            .map_err(|source| Error::Codec { key: self.path.metadata_key(), source })?;
        Ok(Chain::Built(chain))
    }

    fn spec_for(&self, edges: &[u64]) -> ChunkSpec {
        ChunkSpec { shape: edges.to_vec(), ..self.chunk_spec() }
    }

    /// Every chunk the box `offset..offset+shape` (inside the array) touches.
    fn touched(&self, offset: &[u64], shape: &[u64]) -> Vec<Touched> {
        let mut out = Vec::new();
        for_each_index(&self.metadata.chunks_overlapping(offset, shape), |coords| {
            let (origin, edges) = self.metadata.chunk(coords);
            let (lo, size) = (0..coords.len())
                .map(|d| {
                    let start = origin[d].max(offset[d]);
                    let end = (origin[d] + edges[d]).min(offset[d] + shape[d]);
                    (start, end - start)
                })
                .unzip();
            out.push(Touched { coords: coords.to_vec(), origin, edges, lo, size });
        });
        out
    }

    /// The decoded chunk at `coords` of a rectilinear grid, or `None` when it is not stored.
    pub(super) fn read_chunk_rectilinear(&self, coords: &[u64]) -> Result<Option<Vec<u8>>, Error> {
        self.read_touched(coords, &self.metadata.chunk(coords).1)
    }

    /// The decoded chunk at `coords`, of `edges`, or `None` when it is not stored.
    fn read_touched(&self, coords: &[u64], edges: &[u64]) -> Result<Option<Vec<u8>>, Error> {
        let key = self.chunk_key(coords);
        // The array's chain is that of the largest chunk: its bound holds for every chunk.
        // The chunk's own chain is made only for a chunk that is stored.
        let decode = |encoded: &[u8]| -> Result<Vec<u8>, Error> {
            let chain = self.chain_for(edges)?;
            chain.decode(encoded).map_err(|source| Error::Codec { key: key.clone(), source })
        };
        self.with_stored_chunk(&key, decode)?.transpose()
    }

    /// `read_region_bytes_into` on a rectilinear grid (the region and `out` already checked).
    pub(super) fn read_region_rectilinear(&self, offset: &[u64], shape: &[u64], out: &mut [u8]) -> Result<(), Error> {
        let elem = self.data_type().size();
        for t in self.touched(offset, shape) {
            let start: Vec<u64> = t.lo.iter().zip(offset).map(|(l, o)| l - o).collect();
            let dst = BoxIn { shape, start: &start };
            match self.read_touched(&t.coords, &t.edges)? {
                Some(chunk) => {
                    let in_chunk: Vec<u64> = t.lo.iter().zip(&t.origin).map(|(l, o)| l - o).collect();
                    let src = BoxIn { shape: &t.edges, start: &in_chunk };
                    copy_box(&chunk, &src, out, &dst, &t.size, elem);
                }
                None => fill_box(out, &dst, &t.size, self.fill_value().as_le_bytes()),
            }
        }
        Ok(())
    }

    /// `write_region_bytes` on a rectilinear grid (the region already checked).
    pub(super) fn write_region_rectilinear(&self, offset: &[u64], shape: &[u64], bytes: &[u8]) -> Result<(), Error> {
        let elem = self.data_type().size();
        self.scoped(true, |a| {
            for t in a.touched(offset, shape) {
                let spec = a.spec_for(&t.edges);
                crate::codec::check_chunk_size(&spec)
                    .map_err(|source| Error::Codec { key: a.path.metadata_key(), source })?;
                let mut chunk = match a.read_touched(&t.coords, &t.edges)? {
                    Some(chunk) => chunk,
                    None => {
                        let mut fill = vec![0u8; spec.num_bytes() as usize];
                        region::fill(&mut fill, spec.fill_value.as_le_bytes());
                        fill
                    }
                };
                let in_region: Vec<u64> = t.lo.iter().zip(offset).map(|(l, o)| l - o).collect();
                let in_chunk: Vec<u64> = t.lo.iter().zip(&t.origin).map(|(l, o)| l - o).collect();
                let (src, dst) = (BoxIn { shape, start: &in_region }, BoxIn { shape: &t.edges, start: &in_chunk });
                copy_box(bytes, &src, &mut chunk, &dst, &t.size, elem);
                let key = a.chunk_key(&t.coords);
                if region::is_all(&chunk, a.fill_value().as_le_bytes()) {
                    a.store.erase(&key)?;
                } else {
                    let encoded = a.chain_for(&t.edges)?.encode(chunk);
                    a.store.set_owned(&key, encoded.map_err(|source| Error::Codec { key: key.clone(), source })?)?;
                }
            }
            Ok(())
        })
    }

    /// `write_scattered` on a rectilinear grid (the elements already checked): each chunk, of
    /// its own edges, read-modify-written inside one write scope, as region writes are here.
    pub(super) fn write_scattered_rectilinear(&self, grouped: &[super::scatter::ChunkWrites<'_>]) -> Result<(), Error> {
        let elem = self.data_type().size();
        self.scoped(true, |a| {
            for chunk in grouped {
                let coords = chunk.writes[0].coords;
                let edges = a.metadata.chunk(coords).1;
                let spec = a.spec_for(&edges);
                crate::codec::check_chunk_size(&spec)
                    .map_err(|source| Error::Codec { key: a.path.metadata_key(), source })?;
                // From the last whole-chunk write on, nothing stored is read.
                let whole = chunk.writes.iter().rposition(|w| w.indices.is_none());
                let (mut data, rest) = match whole {
                    Some(at) => (chunk.writes[at].values.to_vec(), &chunk.writes[at + 1..]),
                    None => {
                        let stored = a.read_touched(coords, &edges)?;
                        let data = stored.unwrap_or_else(|| {
                            let mut fill = vec![0u8; spec.num_bytes() as usize];
                            region::fill(&mut fill, spec.fill_value.as_le_bytes());
                            fill
                        });
                        (data, &chunk.writes[..])
                    }
                };
                for write in rest {
                    if let Some(indices) = write.indices {
                        super::scatter::scatter(&mut data, indices, write.values, elem);
                    }
                }
                if region::is_all(&data, a.fill_value().as_le_bytes()) {
                    a.store.erase(&chunk.key)?;
                } else {
                    let encoded = a.chain_for(&edges)?.encode(data);
                    let encoded = encoded.map_err(|source| Error::Codec { key: chunk.key.clone(), source })?;
                    a.store.set_owned(&chunk.key, encoded)?;
                }
            }
            Ok(())
        })
    }

    /// `resize` on a rectilinear grid: every stored chunk keeps what lies inside both the old and
    /// the new shape; the rest of it becomes the fill value (a chunk with nothing left is erased).
    /// Chunk coordinates do not move: a growth appends edges after the old ones.
    pub(super) fn resize_rectilinear(&self, new: &crate::metadata::ArrayMetadata) -> Result<(), Error> {
        if self.data_type().is_variable_length() {
            self.require_regular("resizing a variable-length array")?;
        }
        let keep: Vec<u64> = self.shape().iter().zip(&new.shape).map(|(o, n)| *o.min(n)).collect();
        let elem = self.data_type().size();
        for (key, coords) in self.stored_chunk_coords_unscoped()? {
            let (origin, edges) = self.metadata.chunk(&coords);
            if origin.iter().zip(&keep).any(|(o, k)| o >= k) {
                self.store.erase(&key)?;
                continue;
            }
            let kept: Vec<u64> = (0..edges.len()).map(|d| edges[d].min(keep[d] - origin[d])).collect();
            if kept == edges {
                continue;
            }
            let Some(stored) = self.read_touched(&coords, &edges)? else { continue };
            let spec = self.spec_for(&edges);
            let mut trimmed = vec![0u8; stored.len()];
            region::fill(&mut trimmed, spec.fill_value.as_le_bytes());
            let zero = vec![0; edges.len()];
            let whole = BoxIn { shape: &edges, start: &zero };
            copy_box(&stored, &whole, &mut trimmed, &whole, &kept, elem);
            if region::is_all(&trimmed, spec.fill_value.as_le_bytes()) {
                self.store.erase(&key)?;
            } else {
                let encoded = self.chain_for(&edges)?.encode(trimmed);
                self.store.set_owned(&key, encoded.map_err(|source| Error::Codec { key: key.clone(), source })?)?;
            }
        }
        self.store.set(&self.path.metadata_key(), &new.to_json_bytes())?;
        Ok(())
    }
}
