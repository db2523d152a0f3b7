//! Target `npy`: a whole `.npy` file (magic, version, header dictionary, data), read as an
//! import reads it. When it reads, the data has the length the header promises, and the header
//! written back by `to_bytes` reads as the same type and shape.

use zarrdb::transfer::NpyHeader;

/// One input.
pub fn run(data: &[u8]) {
    let Ok((header, values)) = NpyHeader::read_file(&mut &data[..], "fuzzed.npy") else { return };
    assert_eq!(Some(values.len() as u64), header.data_len(), "the data read is not the length the header gives");
    let again = header.to_bytes();
    let reread = NpyHeader::read(&mut &again[..], "rewritten.npy").expect("a header written by to_bytes reads");
    assert_eq!(reread.data_type(), header.data_type(), "the data type changed on a round trip");
    assert_eq!(reread.shape(), header.shape(), "the shape changed on a round trip");
}
