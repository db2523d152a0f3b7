//! The fuzz targets' code (`fuzz/fuzz_targets/` are one-line wrappers around each module's `run`)
//! and the seed corpus writer (`seeds`). Living in a library, every target also runs on the stable
//! toolchain: `cargo test --manifest-path fuzz/Cargo.toml` feeds each committed seed through its
//! target, so a seed that once crashed stays a regression test without nightly or libFuzzer.
//!
//! Each target must answer every input with a value or an error: never a panic, a hang, or an
//! allocation sized by the input beyond the library's caps (`fuzz/run.sh` runs libFuzzer with
//! `-rss_limit_mb=2048 -malloc_limit_mb=2048`). Where a second path to the same answer exists
//! (a whole read and a partial one, a decode and a re-encode), the targets also check they agree.

pub mod codecs;
pub mod commit_log;
pub mod database;
pub mod history;
pub mod metadata;
pub mod npy;
pub mod seeds;
pub mod shard_index;
pub mod zip;

/// `data` cut at its first `n - 1` NUL bytes into at most `n` pieces.
pub fn split_nul(data: &[u8], n: usize) -> Vec<&[u8]> {
    data.splitn(n, |&b| b == 0).collect()
}

/// Regions whose elements take more than this many bytes are not read: the caller asks for the
/// region's size, and the target would spend its time allocating and filling, not parsing.
pub const MAX_READ_BYTES: u64 = 1 << 22;

/// The number of elements of `shape`, `None` past `u64`.
pub fn elements(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
}

/// Whether a region of `shape` of `array` is small enough to read (see [`MAX_READ_BYTES`]).
pub fn readable(array: &zarrdb::Array, shape: &[u64]) -> bool {
    let element = (array.data_type().size() as u64).max(1);
    shape.iter().try_fold(element, |n, &d| n.checked_mul(d)).is_some_and(|n| n <= MAX_READ_BYTES)
}
