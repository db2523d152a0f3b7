//! The chunk shape zarrdb picks when a new array's metadata names none
//! ([`ArrayMetadata::auto_chunked`]): about 1 MiB per chunk, shaped to the array, as zarr-python
//! and tensorstore choose one when asked to.

use super::{ArrayMetadata, DataType};

/// The most bytes an automatic chunk holds (it holds at least half of it unless the whole array
/// is smaller).
pub(crate) const AUTO_CHUNK_BYTES: u64 = 1 << 20;

/// Bytes assumed per element of a variable-length type (text, bytes), whose size is unknown
/// until written: a short string and its length prefix.
const VARIABLE_LENGTH_GUESS: u64 = 16;

/// The automatic chunk shape of an array of `shape` holding `data_type`: the whole array, halved
/// (rounding up) along its longest chunk dimension, the outermost among equals, until a chunk
/// holds at most [`AUTO_CHUNK_BYTES`]. A dimension of length 0 gets chunks of 1.
///
/// ```
/// use zarrdb::{ArrayMetadata, DataType};
/// // 256 MiB of float32 in 512 x 512 chunks of 1 MiB, as the shared big_zstd workload uses.
/// assert_eq!(ArrayMetadata::auto_chunk_shape(&DataType::Float32, &[8192, 8192]), [512, 512]);
/// // A small array is one chunk.
/// assert_eq!(ArrayMetadata::auto_chunk_shape(&DataType::Int16, &[100, 3]), [100, 3]);
/// ```
pub(super) fn chunk_shape(data_type: &DataType, shape: &[u64]) -> Vec<u64> {
    let item = match data_type.size() as u64 {
        0 => VARIABLE_LENGTH_GUESS,
        n => n,
    };
    let mut chunk: Vec<u64> = shape.iter().map(|&s| s.max(1)).collect();
    // u128: a chunk of the whole array may hold more bytes than u64 counts.
    let bytes = |chunk: &[u64]| chunk.iter().fold(u128::from(item), |acc, &c| acc.saturating_mul(u128::from(c)));
    while bytes(&chunk) > u128::from(AUTO_CHUNK_BYTES) {
        let Some((longest, &len)) = chunk.iter().enumerate().rev().max_by_key(|&(_, len)| *len) else { break };
        if len == 1 {
            break;
        }
        chunk[longest] = len.div_ceil(2);
    }
    chunk
}

impl ArrayMetadata {
    /// A new array's metadata as [`ArrayMetadata::new`] makes it, with the automatic chunk shape
    /// ([`ArrayMetadata::auto_chunk_shape`]).
    ///
    /// ```
    /// use zarrdb::{ArrayMetadata, DataType};
    /// let meta = ArrayMetadata::auto_chunked(DataType::Float64, vec![1_000_000]);
    /// assert_eq!(meta.chunk_shape, [125_000]); // 1,000,000 bytes
    /// ```
    pub fn auto_chunked(data_type: DataType, shape: Vec<u64>) -> ArrayMetadata {
        let chunks = chunk_shape(&data_type, &shape);
        ArrayMetadata::new(data_type, shape, chunks)
    }

    /// The chunk shape [`ArrayMetadata::auto_chunked`] picks for `shape` and `data_type`: the
    /// whole array, halved (rounding up) along its longest chunk dimension, the outermost among
    /// equals, until a chunk holds at most 1 MiB, so it holds more than 512 KiB unless the whole
    /// array is smaller. Elements of variable length count as 16 bytes; a dimension of length 0
    /// gets chunks of 1.
    pub fn auto_chunk_shape(data_type: &DataType, shape: &[u64]) -> Vec<u64> {
        chunk_shape(data_type, shape)
    }
}

#[cfg(test)]
mod tests {
    use super::{chunk_shape, AUTO_CHUNK_BYTES};
    use crate::metadata::DataType;

    fn bytes(data_type: &DataType, chunk: &[u64]) -> u64 {
        chunk.iter().product::<u64>()
            * match data_type.size() {
                0 => 16,
                n => n as u64,
            }
    }

    #[test]
    fn chunks_hold_half_to_one_mebibyte_shaped_to_the_array() {
        let cases: [(DataType, &[u64], &[u64]); 8] = [
            (DataType::Float32, &[8192, 8192], &[512, 512]),
            (DataType::Float64, &[1_000_000], &[125_000]),
            (DataType::UInt8, &[100_000, 10, 10], &[6250, 10, 10]),
            (DataType::Float32, &[365, 721, 1440], &[46, 46, 90]),
            (DataType::Int16, &[100, 3], &[100, 3]),
            (DataType::Float32, &[0, 4096], &[1, 4096]),
            (DataType::Bool, &[], &[]),
            (DataType::String, &[1 << 20], &[65_536]),
        ];
        for (data_type, shape, want) in cases {
            let got = chunk_shape(&data_type, shape);
            assert_eq!(got, want, "{data_type:?} {shape:?}");
            let whole: Vec<u64> = shape.iter().map(|&s| s.max(1)).collect();
            let held = bytes(&data_type, &got);
            assert!(held <= AUTO_CHUNK_BYTES, "{shape:?}: {held} bytes");
            assert!(held > AUTO_CHUNK_BYTES / 2 || got == whole, "{shape:?}: only {held} bytes");
        }
    }

    #[test]
    fn absurd_shapes_end_in_chunks_of_one_mebibyte_without_overflow() {
        let got = chunk_shape(&DataType::Complex128, &[u64::MAX, u64::MAX, 3]);
        assert!(got.iter().all(|&c| c >= 1));
        assert!(bytes(&DataType::Complex128, &got) <= AUTO_CHUNK_BYTES);
    }
}
