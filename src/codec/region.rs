//! Region arithmetic: which chunks a box touches, and copying boxes between C-order buffers. A
//! leaf of the codec layer (it needs only `std`): the sharding and transpose codecs use it inside
//! a chunk, the array layer across chunks.

use std::ops::Range;

/// For each dimension, the range of chunk indices that the box `offset..offset+shape` touches.
/// Empty when the box is empty.
pub(crate) fn chunk_ranges(offset: &[u64], shape: &[u64], chunk_shape: &[u64]) -> Vec<Range<u64>> {
    offset
        .iter()
        .zip(shape)
        .zip(chunk_shape)
        .map(|((&o, &s), &c)| if s == 0 { 0..0 } else { o / c..(o + s - 1) / c + 1 })
        .collect()
}

/// The part of grid cell `coords` (cells of `cell_shape`) inside the box `offset..offset+shape`:
/// its lower corner and its size.
pub(crate) fn intersect(coords: &[u64], cell_shape: &[u64], offset: &[u64], shape: &[u64]) -> (Vec<u64>, Vec<u64>) {
    (0..coords.len())
        .map(|d| {
            let origin = coords[d] * cell_shape[d];
            let start = origin.max(offset[d]);
            // The last cell of a grid may reach past u64::MAX (shape 2^64-1, chunks 2^40).
            let end = origin.saturating_add(cell_shape[d]).min(offset[d] + shape[d]);
            (start, end - start)
        })
        .unzip()
}

/// `lo` relative to the corner of grid cell `coords` (cells of `cell_shape`).
pub(crate) fn offset_in_cell(lo: &[u64], coords: &[u64], cell_shape: &[u64]) -> Vec<u64> {
    lo.iter().zip(coords).zip(cell_shape).map(|((l, c), s)| l - c * s).collect()
}

/// Call `f` with every index in the product of `ranges`, in C order. Rank 0 yields one empty index.
pub(crate) fn for_each_index(ranges: &[Range<u64>], mut f: impl FnMut(&[u64])) {
    if ranges.iter().any(|r| r.is_empty()) {
        return;
    }
    let mut index: Vec<u64> = ranges.iter().map(|r| r.start).collect();
    loop {
        f(&index);
        let mut dim = ranges.len();
        loop {
            if dim == 0 {
                return;
            }
            dim -= 1;
            index[dim] += 1;
            if index[dim] < ranges[dim].end {
                break;
            }
            index[dim] = ranges[dim].start;
        }
    }
}

/// A box inside a C-order buffer of shape `shape`, starting at `start`.
pub(crate) struct BoxIn<'a> {
    pub shape: &'a [u64],
    pub start: &'a [u64],
}

/// Walk the contiguous runs of a `size`-shaped box inside two buffers; `f(src_elem, dst_elem, len)`
/// gets element offsets and the run length. Trailing dimensions that both buffers hold whole are
/// merged into one run, so copying a whole chunk is one call.
pub(crate) fn runs(src: &BoxIn<'_>, dst: &BoxIn<'_>, size: &[u64], mut f: impl FnMut(usize, usize, usize)) {
    let n = size.len();
    if size.contains(&0) {
        return;
    }
    if n == 0 {
        f(0, 0, 1);
        return;
    }
    let mut inner = n - 1;
    let mut run = size[n - 1];
    while inner > 0 && size[inner] == src.shape[inner] && size[inner] == dst.shape[inner] {
        inner -= 1;
        run *= size[inner];
    }
    let strides = |shape: &[u64]| {
        let mut s = vec![1u64; n];
        for d in (0..n - 1).rev() {
            s[d] = s[d + 1] * shape[d + 1];
        }
        s
    };
    let (src_strides, dst_strides) = (strides(src.shape), strides(dst.shape));
    let outer: Vec<Range<u64>> = (0..inner).map(|d| 0..size[d]).collect();
    for_each_index(&outer, |i| {
        let mut s = 0;
        let mut d_off = 0;
        for d in 0..n {
            let step = if d < inner { i[d] } else { 0 };
            s += (src.start[d] + step) * src_strides[d];
            d_off += (dst.start[d] + step) * dst_strides[d];
        }
        f(s as usize, d_off as usize, run as usize);
    });
}

/// Copy a box of `size` elements (each `elem` bytes) from `src_buf` to `dst_buf`.
pub(crate) fn copy_box(
    src_buf: &[u8],
    src: &BoxIn<'_>,
    dst_buf: &mut [u8],
    dst: &BoxIn<'_>,
    size: &[u64],
    elem: usize,
) {
    runs(src, dst, size, |s, d, len| {
        dst_buf[d * elem..(d + len) * elem].copy_from_slice(&src_buf[s * elem..(s + len) * elem]);
    });
}

/// The elements of a `size`-shaped box of `src_buf` as a new C-order buffer. Built by appending
/// runs, so the buffer is never zero-filled first.
pub(crate) fn gather_box(src_buf: &[u8], src: &BoxIn<'_>, size: &[u64], elem: usize) -> Vec<u8> {
    let mut out = Vec::new();
    gather_box_into(src_buf, src, size, elem, &mut out);
    out
}

/// `gather_box` into `out`, replacing its contents: a reused buffer stays allocated and
/// cache-warm between the many small boxes of a shard.
pub(crate) fn gather_box_into(src_buf: &[u8], src: &BoxIn<'_>, size: &[u64], elem: usize, out: &mut Vec<u8>) {
    let total = size.iter().product::<u64>() as usize * elem;
    out.clear();
    out.reserve(total);
    let zero = vec![0; size.len()];
    // The destination is the box itself, so runs arrive in destination order.
    runs(src, &BoxIn { shape: size, start: &zero }, size, |s, _, len| {
        out.extend_from_slice(&src_buf[s * elem..(s + len) * elem]);
    });
    debug_assert_eq!(out.len(), total);
}

/// Set every element of a box in `dst_buf` to `pattern` (one element's bytes).
pub(crate) fn fill_box(dst_buf: &mut [u8], dst: &BoxIn<'_>, size: &[u64], pattern: &[u8]) {
    let elem = pattern.len();
    runs(dst, dst, size, |_, d, len| fill(&mut dst_buf[d * elem..(d + len) * elem], pattern));
}

/// Fill a whole buffer with repetitions of `pattern`.
pub(crate) fn fill(buf: &mut [u8], pattern: &[u8]) {
    if pattern.iter().all(|&b| b == pattern[0]) {
        buf.fill(pattern[0]);
    } else {
        for chunk in buf.chunks_exact_mut(pattern.len()) {
            chunk.copy_from_slice(pattern);
        }
    }
}

/// Whether every element of `buf` equals `pattern` (bytewise, so NaNs match only the same NaN).
pub(crate) fn is_all(buf: &[u8], pattern: &[u8]) -> bool {
    // Compared a block at a time: a loop without an early exit vectorises, and the exit between
    // blocks still stops at the first block holding another value. Byte by byte, checking a
    // mostly-fill chunk cost a noticeable share of encoding it.
    const BLOCK: usize = 256;
    if pattern.iter().all(|&b| b == pattern[0]) {
        let p = pattern[0];
        buf.chunks(BLOCK).all(|block| block.iter().fold(0u8, |acc, &b| acc | (b ^ p)) == 0)
    } else {
        let block = pattern.repeat((BLOCK / pattern.len()).max(1));
        buf.chunks(block.len()).all(|c| c == &block[..c.len()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_all_finds_one_differing_byte_anywhere() {
        for pattern in [&[0u8][..], &[7, 7, 7, 7], &[0, 0, 0x80, 0x7f], &[1; 300]] {
            for elements in [0usize, 1, 63, 64, 65, 1000] {
                let buf = pattern.repeat(elements);
                assert!(is_all(&buf, pattern), "{} x {pattern:?}", elements);
                for at in [0, buf.len() / 2, buf.len().saturating_sub(1)].into_iter().filter(|&at| at < buf.len()) {
                    let mut other = buf.clone();
                    other[at] ^= 1;
                    assert!(!is_all(&other, pattern), "byte {at} of {} x {pattern:?}", elements);
                }
            }
        }
    }

    #[test]
    fn chunk_ranges_cover_edges() {
        assert_eq!(chunk_ranges(&[3, 0], &[5, 1], &[4, 2]), vec![0..2, 0..1]);
        assert_eq!(chunk_ranges(&[0], &[0], &[4]), vec![0..0]);
    }

    #[test]
    fn copy_box_moves_a_subblock() {
        // 3x4 source holding 0..12; copy its 2x2 block at (1,1) into the corner of a 2x3 buffer.
        let src: Vec<u8> = (0..12).collect();
        let mut dst = vec![0u8; 6];
        copy_box(
            &src,
            &BoxIn { shape: &[3, 4], start: &[1, 1] },
            &mut dst,
            &BoxIn { shape: &[2, 3], start: &[0, 1] },
            &[2, 2],
            1,
        );
        assert_eq!(dst, vec![0, 5, 6, 0, 9, 10]);
    }

    #[test]
    fn gather_box_matches_copy_box() {
        let src: Vec<u8> = (0..60).collect(); // 3x4x5
        let src_box = BoxIn { shape: &[3, 4, 5], start: &[1, 1, 2] };
        let mut copied = vec![0u8; 2 * 3 * 3];
        copy_box(&src, &src_box, &mut copied, &BoxIn { shape: &[2, 3, 3], start: &[0, 0, 0] }, &[2, 3, 3], 1);
        assert_eq!(gather_box(&src, &src_box, &[2, 3, 3], 1), copied);
        assert_eq!(gather_box(&src, &BoxIn { shape: &[3, 4, 5], start: &[0, 0, 0] }, &[3, 4, 5], 1), src);
    }

    #[test]
    fn zero_dim_box_is_one_element() {
        let mut dst = vec![0u8; 2];
        copy_box(&[7, 8], &BoxIn { shape: &[], start: &[] }, &mut dst, &BoxIn { shape: &[], start: &[] }, &[], 2);
        assert_eq!(dst, vec![7, 8]);
    }
}
