//! The buffer a region read returns.
//!
//! A large read spends much of its time touching the fresh memory of its output: the kernel
//! maps each 4 KiB page on its first write (a fault, a zeroed page, a memory-cgroup charge),
//! and on the virtual machines this engine is measured on that costs more than copying the data
//! in (docs/benchmarks.md, "Fresh output memory"). Advising the kernel to back the buffer with
//! transparent huge pages replaces 512 such faults by one per 2 MiB, as numpy does for its own
//! large arrays. Where the kernel has huge pages off, or none free, the advice does nothing.

/// Buffers of at least this many bytes get the advice: below it, the buffer holds few whole
/// 2 MiB pages, and the allocator may hand out memory it already touched.
const HUGE_PAGE_ADVICE_BYTES: usize = 8 << 20;

/// A zeroed buffer of `nbytes` for a read to fill.
pub(super) fn zeroed(nbytes: usize) -> Vec<u8> {
    let out = vec![0u8; nbytes];
    if nbytes >= HUGE_PAGE_ADVICE_BYTES {
        advise_huge_pages(&out);
    }
    out
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(buffer: &[u8]) {
    // Only whole, aligned 2 MiB ranges can be huge pages; a multiple of every base page size.
    const HUGE: usize = 2 << 20;
    let start = buffer.as_ptr() as usize;
    let first = start.next_multiple_of(HUGE);
    let end = (start + buffer.len()) / HUGE * HUGE;
    if end <= first {
        return;
    }
    // SAFETY: [first, end) lies inside `buffer`'s allocation, which this function does not
    // outlive; MADV_HUGEPAGE changes how the kernel backs the pages, never their contents (a
    // zeroed page stays zero), so the buffer's value is the same whether the advice is taken.
    let advised = unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
    // Refused (a kernel without transparent huge pages): the buffer works as it is.
    let _ = advised;
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_buffer: &[u8]) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_and_small_buffers_are_zeroed() {
        for nbytes in [0, 1, 4096, HUGE_PAGE_ADVICE_BYTES - 1, HUGE_PAGE_ADVICE_BYTES, 3 * HUGE_PAGE_ADVICE_BYTES + 5] {
            let out = zeroed(nbytes);
            assert_eq!(out.len(), nbytes);
            assert!(out.iter().all(|&b| b == 0), "{nbytes} bytes");
        }
    }
}
