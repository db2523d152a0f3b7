//! Verifying an array's stored chunks without trusting them: every chunk is fetched and decoded
//! (checksums verified, sizes checked) and every key under the array is accounted for.

use rayon::prelude::*;

use super::Array;
use crate::error::{CodecError, Error};
use crate::metadata::{DataType, METADATA_KEY};

/// What [`Array::check`] found.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct CheckReport {
    /// Chunks fetched and decoded.
    pub chunks_checked: u64,
    /// Chunks that failed to decode, with the reason (wrong size, checksum mismatch, corrupt
    /// stream, lying shard index...).
    pub corrupt: Vec<(String, Error)>,
    /// Chunk keys whose coordinates lie outside the chunk grid.
    pub outside_grid: Vec<String>,
    /// Keys under the array that are not chunk keys of its encoding (foreign files); reported, not
    /// counted as problems.
    pub unrecognized: Vec<String>,
}

impl CheckReport {
    /// Whether every chunk decoded and no chunk lies outside the grid.
    pub fn is_ok(&self) -> bool {
        self.corrupt.is_empty() && self.outside_grid.is_empty()
    }
}

impl Array {
    /// Fetch and decode every stored chunk of the array, in parallel.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// let a = Array::create(store.clone(), "/a", ArrayMetadata::new(DataType::UInt8, vec![4], vec![2])).unwrap();
    /// a.write_region(&[0], &[4], &[1u8, 2, 3, 4]).unwrap();
    /// store.set("a/c/1", &[9]).unwrap(); // truncated: a chunk holds 2 bytes
    /// let report = a.check().unwrap();
    /// assert_eq!((report.chunks_checked, report.corrupt.len()), (2, 1));
    /// ```
    pub fn check(&self) -> Result<CheckReport, Error> {
        self.scoped(false, Array::check_unscoped)
    }

    fn check_unscoped(&self) -> Result<CheckReport, Error> {
        let rank = self.shape().len();
        let grid = self.metadata.grid_shape();
        let mut report = CheckReport::default();
        let mut chunks = Vec::new();
        for key in self.store.list_prefix(&self.prefix)? {
            let rel = &key[self.prefix.len()..];
            if rel == METADATA_KEY {
                continue;
            }
            match self.metadata.chunk_key_encoding.decode(rel, rank) {
                Some(coords) if coords.iter().zip(&grid).all(|(c, g)| c < g) => chunks.push((key, coords)),
                Some(_) => report.outside_grid.push(key),
                None => report.unrecognized.push(key),
            }
        }
        report.chunks_checked = chunks.len() as u64;
        let failures: Vec<(String, Error)> = chunks
            .into_par_iter()
            .filter_map(|(key, coords)| match self.read_chunk(&coords) {
                Ok(Some(decoded)) => self.check_values(&key, &decoded).err().map(|e| (key, e)),
                Ok(None) => None,
                Err(e) => Some((key, e)),
            })
            .collect();
        for (key, err) in failures {
            match err {
                // A store failure is not a verdict on the data: stop and report it.
                Error::Store(e) => return Err(Error::Store(e)),
                e => report.corrupt.push((key, e)),
            }
        }
        Ok(report)
    }

    /// Values no writer produces: a bool is one byte, 0 or 1 (reads take any other byte as true,
    /// as numpy does, but a stored 2 is damage or a foreign writer's bug, and `check` says so).
    fn check_values(&self, key: &str, decoded: &[u8]) -> Result<(), Error> {
        if self.metadata.data_type != DataType::Bool {
            return Ok(());
        }
        match decoded.iter().position(|&b| b > 1) {
            None => Ok(()),
            Some(i) => Err(Error::Codec {
                key: key.to_owned(),
                source: CodecError::Corrupt {
                    codec: "bytes",
                    reason: format!("bool element {i} holds byte {:#04x}; a bool is 0 or 1", decoded[i]),
                    source: None,
                },
            }),
        }
    }
}
