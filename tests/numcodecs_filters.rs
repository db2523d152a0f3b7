//! numcodecs' filters (issue 14, "Real-world Zarr data"): delta, fixedscaleoffset, quantize,
//! bitround, astype and packbits, as zarr-python 3 writes them (`numcodecs.<id>` array -> array
//! codecs), over integer, float and bool data, type-changing filters (fixedscaleoffset and astype
//! to narrower or float types, packbits to bytes), partial edge chunks, 2-D chunks, a non-zero
//! fill value of a type-changing chain, and a filter chain before lz4.
//!
//! numcodecs encodes (through zarr-python) and zarrdb must decode the same values; zarrdb encodes
//! the values and must store exactly numcodecs' bytes, which zarr-python reads back.

#[path = "common/numcodecs.rs"]
mod numcodecs;

#[test]
fn zarrdb_reads_filters_written_by_numcodecs() {
    numcodecs::reads_fixtures("filter");
}

#[test]
fn zarrdb_encodes_filters_bit_exactly_and_zarr_python_reads_them() {
    numcodecs::writes_like_numcodecs("filter");
}
