//! How values are laid out in redb's table: large values split into segments sized to fill redb
//! pages exactly.
//!
//! redb stores a value larger than a page in a leaf page of its own, whose size is the next power
//! of two above key + value + 12 bytes of page header. A 1 MiB chunk therefore takes a 2 MiB page:
//! the file doubles and every write copies twice what it needs (measured: 270 MB of 1 MiB values
//! make a 539 MB file and write at a quarter of the speed of 512 KiB segments). So a value is cut
//! into segments of `SEGMENT_PAGE - overhead` bytes, each filling a 512 KiB page:
//!
//! - segment 0 lives under the Zarr key itself, so small values (one segment) cost nothing extra
//!   and keys stay exactly the Zarr keys;
//! - segment `i >= 1` lives under `key ‖ 0x00 ‖ i as u32 big-endian`. Zarr keys hold no NUL, so
//!   these continuation keys sort right after their key and before any other key that starts with
//!   it, and a listing recognises and skips them by the NUL.
//!
//! Every segment but the last is full, so a value's length is `last_index * segment + len(last)`,
//! read without copying anything.

/// The page size segments fill.
const SEGMENT_PAGE: usize = 512 * 1024;
/// redb's leaf header for one entry (12 bytes), the continuation suffix (5), and slack.
const PAGE_OVERHEAD: usize = 32;
/// Segments never shrink below this, even for absurdly long keys.
const MIN_SEGMENT: usize = 64 * 1024;

/// The segment size of values under `key`.
pub(super) fn segment_size(key: &str) -> usize {
    SEGMENT_PAGE.saturating_sub(PAGE_OVERHEAD + key.len()).max(MIN_SEGMENT)
}

/// The table key of segment `index` of `key`.
pub(super) fn segment_key(key: &str, index: u32) -> Vec<u8> {
    if index == 0 {
        return key.as_bytes().to_vec();
    }
    let mut k = Vec::with_capacity(key.len() + 5);
    k.extend_from_slice(key.as_bytes());
    k.push(0);
    k.extend_from_slice(&index.to_be_bytes());
    k
}

/// The first and last possible continuation keys of `key`.
pub(super) fn continuation_bounds(key: &str) -> (Vec<u8>, Vec<u8>) {
    (segment_key(key, 1), segment_key(key, u32::MAX))
}

/// The segment index of a continuation key, or `None` for a primary (Zarr) key.
pub(super) fn continuation_index(table_key: &[u8]) -> Option<u32> {
    let nul = table_key.iter().position(|&b| b == 0)?;
    let suffix: [u8; 4] = table_key.get(nul + 1..)?.try_into().ok()?;
    Some(u32::from_be_bytes(suffix))
}

/// The smallest table key after every continuation of `key`.
pub(super) fn past_continuations(key: &[u8]) -> Vec<u8> {
    let mut k = key.to_vec();
    k.push(1);
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_keys_sort_between_a_key_and_its_extensions() {
        let (first, last) = continuation_bounds("a/c/0");
        assert!(b"a/c/0".as_slice() < first.as_slice());
        assert!(last.as_slice() < b"a/c/0/1".as_slice());
        assert!(last.as_slice() < b"a/c/0.1".as_slice());
        assert!(last.as_slice() < past_continuations(b"a/c/0").as_slice());
        assert_eq!(continuation_index(&segment_key("k", 7)), Some(7));
        assert_eq!(continuation_index(b"k"), None);
        assert!(segment_size("k") + PAGE_OVERHEAD < SEGMENT_PAGE);
    }
}
