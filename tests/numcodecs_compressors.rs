//! numcodecs' compressors and shuffle (issue 14, "Real-world Zarr data"), as zarr-python 3
//! writes them: lz4 (numcodecs' 4-byte size header and one block; default and a higher
//! acceleration), shuffle alone and before lz4, bz2 (levels 1, 5, 9), lzma in the xz format
//! (default, crc32 with preset 1), the alone format, and the raw format with an LZMA2 chain and a
//! delta + LZMA1 chain.
//!
//! zarrdb must read numcodecs' chunks; its own chunks must be numcodecs' bytes for the
//! deterministic lz4 and shuffle, and read back by zarr-python for all.

#[path = "common/numcodecs.rs"]
mod numcodecs;

#[test]
fn zarrdb_reads_compressed_arrays_written_by_numcodecs() {
    numcodecs::reads_fixtures("compressor");
}

#[test]
fn zarrdb_compresses_like_numcodecs_and_zarr_python_reads_it() {
    numcodecs::writes_like_numcodecs("compressor");
}
