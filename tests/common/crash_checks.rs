//! The array checks shared by the crash workloads (`crash_workload.rs`, `resize_workload.rs`):
//! an array found after a crash must equal the model not only where a read can see it but also in
//! what it stores. Its chunk keys must be exactly those of the chunks holding a non-fill element
//! (none outside the grid, none left behind holding only fill), and the part of a boundary chunk
//! beyond the shape must hold the fill value, or a later growth would bring old data back.

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use zarrdb::Array;

/// The attribute map of a JSON object.
pub fn attrs(value: Value) -> Map<String, Value> {
    value.as_object().expect("an object").clone()
}

/// Call `f` with every index of a box of `size` (row-major order, the last index fastest).
pub fn for_each_index(size: &[u64], mut f: impl FnMut(&[u64])) {
    if size.contains(&0) {
        return;
    }
    let mut index = vec![0; size.len()];
    loop {
        f(&index);
        let Some(d) = (0..size.len()).rev().find(|&d| index[d] + 1 < size[d]) else { return };
        index[d] += 1;
        index[d + 1..].fill(0);
    }
}

/// Grid coordinates of the chunks holding an element that is not `fill` (`values`: C-order
/// element bytes of an array of `shape`).
fn chunks_holding(values: &[u8], fill: &[u8], shape: &[u64], chunk: &[u64]) -> BTreeSet<Vec<u64>> {
    let mut out = BTreeSet::new();
    let mut elements = values.chunks_exact(fill.len());
    for_each_index(shape, |index| {
        if elements.next().expect("as many elements as the shape holds") != fill {
            out.insert(index.iter().zip(chunk).map(|(i, c)| i / c).collect());
        }
    });
    out
}

/// The elements of a stored chunk that lie beyond the array's shape and do not hold the fill
/// value, as array coordinates.
fn beyond_shape(array: &Array, coords: &[u64]) -> Result<Vec<Vec<u64>>, String> {
    let key = array.chunk_key(coords);
    let encoded = array.store().get(&key).map_err(|e| format!("{key}: {e}"))?.ok_or(format!("{key}: gone"))?;
    let decoded = array.decode_chunk(encoded).map_err(|e| format!("{key}: {e}"))?;
    let (chunk, shape, fill) = (array.chunk_shape(), array.shape(), array.fill_value().as_le_bytes());
    let mut elements = decoded.chunks_exact(fill.len());
    let mut out = Vec::new();
    for_each_index(chunk, |local| {
        let element = elements.next().expect("a decoded chunk holds the whole chunk shape");
        let at: Vec<u64> = local.iter().zip(coords).zip(chunk).map(|((l, c), s)| c * s + l).collect();
        if at.iter().zip(shape).any(|(a, s)| a >= s) && element != fill {
            out.push(at);
        }
    });
    Ok(out)
}

/// Check an array against the model's content (`expected`: C-order little-endian element bytes at
/// the array's shape): [`Array::check`] finds no problem and no foreign key, a read returns
/// `expected`, no stored chunk holds data beyond the shape, and the stored chunks are exactly
/// those holding data.
pub fn verify_array_bytes(array: &Array, expected: &[u8]) -> Result<(), String> {
    let path = array.path().to_string();
    let report = array.check().map_err(|e| format!("{path}: check failed: {e}"))?;
    if !report.is_ok() || !report.unrecognized.is_empty() {
        return Err(format!("{path}: check found problems: {report:?}"));
    }
    let origin = vec![0; array.shape().len()];
    let found = array.read_region_bytes(&origin, array.shape()).map_err(|e| format!("{path}: {e}"))?;
    if found != expected {
        let size = array.data_type().size();
        let first = found.chunks(size).zip(expected.chunks(size)).position(|(f, e)| f != e);
        return Err(format!(
            "{path}: content differs from the model ({} bytes, expected {}; first at element {first:?})",
            found.len(),
            expected.len()
        ));
    }
    let stored: BTreeSet<Vec<u64>> =
        array.stored_chunks().map_err(|e| format!("{path}: {e}"))?.into_iter().map(|(c, _)| c).collect();
    for coords in &stored {
        let stale = beyond_shape(array, coords).map_err(|e| format!("{path}: {e}"))?;
        if !stale.is_empty() {
            return Err(format!(
                "{path} (shape {:?}): chunk {coords:?} holds data beyond the shape, at {stale:?}",
                array.shape()
            ));
        }
    }
    let holding = chunks_holding(expected, array.fill_value().as_le_bytes(), array.shape(), array.chunk_shape());
    if stored != holding {
        return Err(format!("{path}: stored chunks {stored:?}, expected those holding data {holding:?}"));
    }
    Ok(())
}
