//! How values are laid out in redb's table: values larger than a page split into segments
//! sized to fill redb pages.
//!
//! redb stores a value larger than a page in a leaf page of its own, whose size is the next power
//! of two above key + value + 12 bytes of page header. A chunk whose size is a power of two
//! (64 x 64 float32 = 16 KiB, 1 MiB) therefore takes a page twice its size: the file doubles and
//! every write copies twice what it needs (measured: 270 MB of 1 MiB values made a 539 MB file
//! and wrote at a quarter of the speed of 512 KiB segments). So a value is cut into segments of
//! equal length, each filling most of a page, the page size (4 KiB to 512 KiB) chosen per value
//! (`segment_size`):
//!
//! - segment 0 lives under the Zarr key itself, so small values (one segment) cost nothing extra
//!   and keys stay exactly the Zarr keys;
//! - segment `i >= 1` lives under `key ‖ 0x00 ‖ i as u32 big-endian`. Zarr keys hold no NUL, so
//!   these continuation keys sort right after their key and before any other key that starts with
//!   it, and a listing recognises and skips them by the NUL.
//!
//! Every segment but the last has the length of segment 0, so a value's length is
//! `last_index * len(segment 0) + len(last)`, read without copying anything, and a byte range
//! finds its segments by division. (Files written before used full 512 KiB-page segments and a
//! short rest for every value; the same rule reads them.)
//!
//! A value a little longer than a whole number of pages (a 4,096-byte chunk: with its key and the
//! leaf header it does not fit a 4 KiB page) would take a whole page more, or twice the page, for
//! a few bytes. Such a value keeps its full segments in the table and its last few bytes, its
//! *tail* (at most [`TAIL_MAX`]), under its Zarr key in a second table, where the short tails of
//! many values share leaves (`plan`). A value has a tail only when its segment 0 fills its page
//! exactly ([`may_have_tail`]), so reads look the tail up only then; its length is the segments'
//! plus the tail's. Files of formats before 4 have no tails table and read as before.

/// The largest page segments fill.
const MAX_PAGE: usize = 512 * 1024;
/// redb's smallest page.
const MIN_PAGE: usize = 4096;
/// redb's leaf header for one entry (12 bytes), the continuation suffix (5), and slack.
const PAGE_OVERHEAD: usize = 32;
/// Segments never shrink below this, even for absurdly long keys.
const MIN_SEGMENT: usize = 2048;
/// What one more entry costs, in bytes of file, when page sizes are compared: a B-tree entry to
/// write and find. It makes the larger page win when two waste about the same.
const ENTRY_COST: usize = 1024;

/// The longest tail (`plan`): a tail shares its leaf with several others.
pub(super) const TAIL_MAX: usize = 1024;
/// What a tail entry costs in its leaf besides its key and bytes (redb's entry offsets), and slack.
const TAIL_OVERHEAD: usize = 16;

/// How a value is laid out: its first `head` bytes in segments of `segment` bytes in the table
/// (the rule above), the rest, its tail, in the tails table (none when `head` is the length).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plan {
    pub(super) segment: usize,
    pub(super) head: usize,
}

/// The room a page of `page` bytes has for a segment of `key`'s value.
fn room(key: &str, page: usize) -> usize {
    page.saturating_sub(PAGE_OVERHEAD + key.len()).max(MIN_SEGMENT)
}

/// Whether a value under `key` whose segment 0 is `first_len` bytes long may have a tail: only a
/// value whose segment 0 fills a page exactly has one (a value without one may fill a page too).
pub(super) fn may_have_tail(key: &str, first_len: usize) -> bool {
    let mut page = MIN_PAGE;
    while page <= MAX_PAGE {
        if first_len == room(key, page) {
            return true;
        }
        page *= 2;
    }
    false
}

/// The layout of a value of `len` bytes under `key`: equal segments (`segment_size`), or full
/// segments of the page that wastes least and a tail of at most `TAIL_MAX` bytes, whichever costs
/// less file, counting `ENTRY_COST` for every entry.
pub(super) fn plan(key: &str, len: usize) -> Plan {
    let segment = segment_size(key, len);
    let whole = Plan { segment, head: len };
    if len == 0 || len + PAGE_OVERHEAD + key.len() <= MIN_PAGE {
        return whole;
    }
    if len + PAGE_OVERHEAD + key.len() > MAX_PAGE {
        // Full segments of the largest page: a short rest goes to the tails.
        let rest = len % segment;
        return if rest > 0 && rest <= TAIL_MAX { Plan { segment, head: len - rest } } else { whole };
    }
    let pages = |plan: Plan| {
        let n = plan.head.div_ceil(plan.segment);
        let page = (plan.segment + PAGE_OVERHEAD + key.len()).next_power_of_two().max(MIN_PAGE);
        let tail = len - plan.head;
        let tail_cost = if tail > 0 { tail + key.len() + TAIL_OVERHEAD + ENTRY_COST } else { 0 };
        n.saturating_mul(page + ENTRY_COST).saturating_add(tail_cost)
    };
    let mut best = (pages(whole), whole);
    let mut page = MIN_PAGE;
    while page <= MAX_PAGE {
        let full = room(key, page);
        let tail = len % full;
        if len >= full && tail <= TAIL_MAX {
            let tailed = Plan { segment: full, head: len - tail };
            let cost = pages(tailed);
            if cost < best.0 {
                best = (cost, tailed);
            }
        }
        page *= 2;
    }
    best.1
}

/// The length of every segment but the last of a value of `len` bytes under `key`; `len` itself
/// (or more) when the value is stored whole.
///
/// A value up to the largest page is cut into `n` segments of (almost) equal length, each
/// filling most of a page of `page` bytes, for the `page` (4 KiB to 512 KiB) that makes
/// `n × page` least. Equal lengths, not full segments and a short rest: redb splits a leaf by
/// halving its bytes, so a short entry next to a long one ends up in the long one's leaf and
/// doubles its page (measured: 64 chunks of 64 KiB per commit, each cut into one full segment
/// and a 45-byte rest, took 1.85x their size once other keys followed them;
/// `tests/redb_value_pages.rs`). Larger values take full 512 KiB segments and a rest.
pub(super) fn segment_size(key: &str, len: usize) -> usize {
    let overhead = PAGE_OVERHEAD + key.len();
    // An empty value is whole whatever its key (one beyond a page would divide by no segments).
    if len == 0 || len + overhead <= MIN_PAGE {
        return len.max(1);
    }
    if len + overhead > MAX_PAGE {
        // Full segments of the largest page and a rest: a rest doubles at most one page in many,
        // and equal segments would need smaller pages, whose inserts cost more than the space
        // saved (measured: 1 MiB chunks as 33 segments of 32 KiB wrote at 595 MB/s, as two of
        // 512 KiB and a rest at 1,000 MB/s; medians of 6, alternated).
        return MAX_PAGE.saturating_sub(overhead).max(MIN_SEGMENT);
    }
    let mut best: Option<(usize, usize)> = None; // (cost, segment length)
    let mut page = MIN_PAGE;
    while page <= MAX_PAGE {
        let room = page.saturating_sub(overhead).max(MIN_SEGMENT);
        let n = len.div_ceil(room);
        let cost = n.saturating_mul(page + ENTRY_COST);
        if best.is_none_or(|(c, _)| cost <= c) {
            best = Some((cost, len.div_ceil(n)));
        }
        page *= 2;
    }
    best.map_or(len, |(_, size)| size)
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
        assert!(segment_size("k", 4 << 20) + PAGE_OVERHEAD < MAX_PAGE);
    }

    /// The file bytes the segments of a `len`-byte value take: one page per segment.
    fn pages(key: &str, len: usize) -> usize {
        let size = segment_size(key, len);
        let page = |bytes: usize| (bytes + PAGE_OVERHEAD + key.len()).next_power_of_two().max(MIN_PAGE);
        let mut total = 0;
        let mut rest = len;
        while rest > 0 {
            let piece = rest.min(size);
            total += page(piece);
            rest -= piece;
        }
        total
    }

    #[test]
    fn power_of_two_values_do_not_take_pages_twice_their_size() {
        let key = "group/array/c/12/7";
        for (len, at_most) in [
            (16 << 10, 1.26),
            (64 << 10, 1.13),
            (256 << 10, 1.07),
            (1 << 20, 1.01),
            (4 << 20, 1.01),
            (900_000, 1.17),
            (3000, 1.37),
        ] {
            let ratio = pages(key, len) as f64 / len as f64;
            assert!(ratio <= at_most, "{len} bytes take {ratio:.3}x");
        }
        // Small values stay whole; segments never exceed the largest page.
        assert!(segment_size(key, 100) >= 100);
        for len in [5000, 70_000, 600_000, 1 << 22, 123_456_789] {
            let size = segment_size(key, len);
            assert!(size + PAGE_OVERHEAD + key.len() <= MAX_PAGE, "{len}: {size}");
            assert!(size >= MIN_SEGMENT);
            // Equal segments up to the largest page: the last is not a short rest.
            let last = len - (len.div_ceil(size) - 1) * size;
            assert!(len > MAX_PAGE || last * 2 >= size, "{len}: segments of {size}, the last {last}");
        }
        let absurd = "k".repeat(1 << 20);
        assert!(segment_size(&absurd, 1 << 20) >= MIN_SEGMENT);
    }

    #[test]
    fn a_tail_is_found_where_a_plan_puts_one() {
        for key in ["k", "group/array/c/12/7", &"x".repeat(5000)] {
            for len in (0..140_000).step_by(97).chain([4096, 16_384, 65_536, 524_288, 1 << 20, (1 << 20) + 700]) {
                let plan = plan(key, len);
                assert!(plan.head <= len && len - plan.head <= TAIL_MAX, "{len}: {plan:?}");
                if plan.head < len {
                    // Full segments only, the first filling its page: the reader looks the tail up.
                    assert_eq!(plan.head % plan.segment, 0, "{len}: {plan:?}");
                    assert!(may_have_tail(key, plan.segment), "{len}: {plan:?}");
                }
            }
        }
        // A 4,096-byte chunk: one full 4 KiB page and a tail, not an 8 KiB page.
        let four_kib = plan("a/c/0", 4096);
        assert_eq!(four_kib.segment, MIN_PAGE - PAGE_OVERHEAD - 5);
        assert_eq!(four_kib.head, four_kib.segment);
        // Values that fit a page stay whole.
        assert_eq!(plan("a/c/0", 4000), Plan { segment: 4000, head: 4000 });
    }
}
