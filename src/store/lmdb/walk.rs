//! A structural check of `data.mdb`, read with plain file reads before LMDB maps it (what
//! `verify_on_open` means for LMDB, and so what `zarrdb check` runs).
//!
//! LMDB trusts its pages: a damaged node flag or offset can make it read outside the map or
//! follow a null cursor (a signal, not an error), and a page copied over another or zeroed can
//! leave a tree LMDB walks happily while keys go missing. This walk reads every page of both
//! trees (free pages and the main database) from the newer meta page and refuses the file when
//! a page is not what its parent says it is:
//! - each page records its own number, so a page swapped with another or zeroed is found;
//! - page kinds, node offsets, key and value extents lie within the page; nodes of a
//!   non-duplicate database carry no sub-database or duplicate flags;
//! - keys are strictly increasing across the whole tree; all leaves sit at the recorded depth;
//! - overflow runs are where their node says and inside the pages in use;
//! - the page and entry counts equal those the meta page records; no page is reached twice.
//!
//! The layout (64-bit LMDB 0.9, little-endian): a 16-byte page header (page number u64, pad
//! u16, flags u16, then lower/upper u16 bounds of the free space, or for an overflow run its
//! page count u32), then u16 node offsets; a node is data size (or child page) u32 as two u16,
//! flags u16, key size u16, key, data.
//!
//! Memory is one page buffer per tree level, the key last seen and one bit per page of the file.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

const HEADER: usize = 16;
const NODE: usize = 8;
const MAGIC: u32 = 0xBEEF_C0DE;
const NO_ROOT: u64 = u64::MAX;
const BRANCH: u16 = 0x01;
const LEAF: u16 = 0x02;
const OVERFLOW: u16 = 0x04;
/// Flags LMDB may leave on a page it wrote (dirty, keep) that say nothing about its kind.
const TRANSIENT: u16 = 0x10 | 0x8000;
const BIG_DATA: u16 = 0x01;
/// Deeper than any LMDB tree over a file this size can be; bounds the recursion.
const MAX_DEPTH: u16 = 64;

/// What the meta page records of one tree.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Tree {
    depth: u16,
    branch_pages: u64,
    leaf_pages: u64,
    overflow_pages: u64,
    entries: u64,
    root: u64,
}

/// Walks of a file another process keeps committing to before giving up on checking it.
const ATTEMPTS: usize = 5;

/// Check `data.mdb`; the first defect found, described, or Ok.
///
/// Another process may commit while the walk reads. LMDB never overwrites the pages of the
/// latest commit, only pages freed before it, so a walk during which the newest meta page
/// stayed the same read one consistent tree: its verdict stands. When a commit landed
/// meanwhile the walk is repeated; a file that changes under every attempt is left to LMDB
/// and the value checksums.
pub(super) fn verify(data: &Path) -> Result<(), String> {
    let file = File::open(data).map_err(|e| format!("cannot read {}: {e}", data.display()))?;
    for _ in 0..ATTEMPTS {
        let before = newest_commit(&file);
        let verdict = walk_once(&file, data);
        if verdict.is_ok() || newest_commit(&file) == before {
            return verdict;
        }
    }
    Ok(())
}

/// The newest meta page's transaction id, if readable (to notice a commit).
fn newest_commit(file: &File) -> Option<u64> {
    let len = file.metadata().ok()?.len();
    let (first, second, _) = meta_pages(file, len).ok()?;
    Some(u64_at(&first, 144).max(u64_at(&second, 144)))
}

/// The page size of `data.mdb` and the transaction id of its newest meta page.
pub(super) fn page_size_and_txnid(file: &File) -> Result<(usize, u64), String> {
    let len = file.metadata().map_err(|e| format!("cannot stat data.mdb: {e}"))?.len();
    let (first, second, page_size) = meta_pages(file, len)?;
    Ok((page_size, u64_at(&first, 144).max(u64_at(&second, 144))))
}

/// The start of both meta pages (as much as the walk reads of them) and the page size the first
/// records.
fn meta_pages(file: &File, len: u64) -> Result<([u8; 160], [u8; 160], usize), String> {
    let mut first = [0u8; 160];
    read_at(file, &mut first, 0, len, "meta page 0")?;
    let page_size = u32_at(&first, 40) as usize;
    if !(4096..=65536).contains(&page_size) || !page_size.is_power_of_two() {
        return Err(format!("meta page 0 records a page size of {page_size} bytes"));
    }
    let mut second = [0u8; 160];
    read_at(file, &mut second, page_size as u64, len, "meta page 1")?;
    Ok((first, second, page_size))
}

/// Whether `file` is an LMDB data file: its first page is a meta page with LMDB's magic number
/// (what an interrupted compaction's copy is, once LMDB wrote its first page).
pub(super) fn is_lmdb_file(file: &File) -> bool {
    let mut head = [0u8; 20];
    std::os::unix::fs::FileExt::read_exact_at(file, &mut head, 0).is_ok() && u32_at(&head, 16) == MAGIC
}

fn walk_once(file: &File, data: &Path) -> Result<(), String> {
    let len = file.metadata().map_err(|e| format!("cannot stat {}: {e}", data.display()))?.len();
    let (first, second, page_size) = meta_pages(file, len)?;
    let meta = [&first, &second]
        .into_iter()
        .filter(|m| u32_at(m.as_slice(), 16) == MAGIC)
        .max_by_key(|m| u64_at(m.as_slice(), 144))
        .ok_or("neither meta page carries LMDB's magic number")?;
    // The meta page's last page may lie past the end of a sound file: a page a transaction
    // allocated and freed again before it committed is never written (LMDB's "loose" pages go
    // to the free list, their numbers counted). So the end of the file is checked against the
    // pages the trees reach, each of which is read (`Walk::mark`).
    let last_page = u64_at(meta, 136);
    let pages = len / page_size as u64;
    let mut walk = Walk {
        file,
        integer_keys: false,
        len,
        page_size,
        last_page,
        seen: vec![0u64; usize::try_from(pages.div_ceil(64)).map_err(|_| "file too large")?],
        last_key: None,
        counted: Tree::default(),
    };
    walk.mark(0)?;
    walk.mark(1)?;
    // The free-page tree is keyed by transaction id, a native (little-endian) integer.
    for (name, at, integer_keys) in [("free-page", 40, true), ("main", 88, false)] {
        let recorded = tree_at(meta, at);
        walk.counted = Tree { depth: recorded.depth, root: recorded.root, ..Tree::default() };
        walk.last_key = None;
        walk.integer_keys = integer_keys;
        if recorded.root != NO_ROOT {
            if recorded.depth == 0 || recorded.depth > MAX_DEPTH {
                return Err(format!("the {name} tree records depth {}", recorded.depth));
            }
            walk.page(recorded.root, 1)?;
        } else if recorded.entries != 0 || recorded.depth != 0 {
            return Err(format!("the {name} tree has no root but records {} entries", recorded.entries));
        }
        if walk.counted != recorded {
            return Err(format!(
                "the {name} tree's pages disagree with its meta page: found {:?}, recorded {recorded:?}",
                walk.counted
            ));
        }
    }
    Ok(())
}

struct Walk<'a> {
    file: &'a File,
    /// Keys compare as u64 (LMDB's MDB_INTEGERKEY), not bytewise.
    integer_keys: bool,
    len: u64,
    page_size: usize,
    last_page: u64,
    seen: Vec<u64>,
    last_key: Option<Vec<u8>>,
    counted: Tree,
}

impl Walk<'_> {
    /// Whether key `a` sorts strictly before key `b` in this tree.
    fn before(&self, a: &[u8], b: &[u8]) -> bool {
        if self.integer_keys && a.len() == 8 && b.len() == 8 {
            return u64_at(a, 0) < u64_at(b, 0);
        }
        a < b
    }

    /// Note page `number` as reached; a page reached twice is a cycle or a shared subtree, and
    /// one past the end of the file means the file is cut short.
    fn mark(&mut self, number: u64) -> Result<(), String> {
        if number > self.last_page {
            return Err(format!("page {number} lies past the last page in use ({})", self.last_page));
        }
        let pages = self.len / self.page_size as u64;
        if number >= pages {
            return Err(format!("the file is cut short: page {number} is in use, the file holds {pages} pages"));
        }
        let (word, bit) = ((number / 64) as usize, number % 64);
        if self.seen[word] & (1 << bit) != 0 {
            return Err(format!("page {number} is reached twice"));
        }
        self.seen[word] |= 1 << bit;
        Ok(())
    }

    /// Check page `number` at `level` (1 = root) and everything below it.
    fn page(&mut self, number: u64, level: u16) -> Result<(), String> {
        self.mark(number)?;
        let mut page = vec![0u8; self.page_size];
        read_at(self.file, &mut page, number * self.page_size as u64, self.len, "a page")?;
        if u64_at(&page, 0) != number {
            return Err(format!("page {number} holds page {} (moved, zeroed or overwritten)", u64_at(&page, 0)));
        }
        let flags = u16_at(&page, 10) & !TRANSIENT;
        let (lower, upper) = (usize::from(u16_at(&page, 12)), usize::from(u16_at(&page, 14)));
        if lower < HEADER || lower % 2 != 0 || lower > upper || upper > self.page_size {
            return Err(format!("page {number} has free space bounds {lower}..{upper}"));
        }
        let count = (lower - HEADER) / 2;
        let leaf = match flags {
            LEAF => true,
            BRANCH => false,
            _ => return Err(format!("page {number} has flags {flags:#x}, not a branch or leaf page")),
        };
        if leaf != (level == self.counted.depth) {
            return Err(format!(
                "page {number} is a {} page at level {level} of a tree of depth {}",
                if leaf { "leaf" } else { "branch" },
                self.counted.depth
            ));
        }
        if count == 0 {
            return Err(format!("page {number} holds no nodes"));
        }
        if leaf {
            self.counted.leaf_pages += 1;
        } else {
            self.counted.branch_pages += 1;
        }
        let mut previous: Option<&[u8]> = None;
        for i in 0..count {
            let at = usize::from(u16_at(&page, HEADER + 2 * i));
            if at < upper || at % 2 != 0 || at + NODE > self.page_size {
                return Err(format!("page {number} node {i} lies at offset {at}, outside the page's nodes"));
            }
            let low = u64::from(u16_at(&page, at)) | u64::from(u16_at(&page, at + 2)) << 16;
            let node_flags = u16_at(&page, at + 4);
            let key_size = usize::from(u16_at(&page, at + 6));
            let key_end = at + NODE + key_size;
            if key_end > self.page_size {
                return Err(format!("page {number} node {i}'s key runs past the page"));
            }
            let key = &page[at + NODE..key_end];
            // Leaf keys are checked against the tree's last key (`leaf`), which covers their own
            // page too. A branch's first key is empty by design: its child holds everything
            // below the next.
            if !leaf && i > 0 {
                if previous.is_some_and(|p| !self.before(p, key)) {
                    return Err(format!("page {number} node {i}'s key is out of order"));
                }
                previous = Some(key);
            }
            if leaf {
                self.leaf(number, i, node_flags, low, key, key_end, &page)?;
            } else {
                let child = low | u64::from(node_flags) << 32;
                self.page(child, level + 1)?;
            }
        }
        Ok(())
    }

    /// Check leaf node `i` of page `number` and the overflow run its value may live in.
    #[expect(clippy::too_many_arguments, reason = "the node's fields, already decoded by the caller")]
    fn leaf(
        &mut self,
        number: u64,
        i: usize,
        flags: u16,
        size: u64,
        key: &[u8],
        key_end: usize,
        page: &[u8],
    ) -> Result<(), String> {
        if flags & !BIG_DATA != 0 {
            return Err(format!("page {number} node {i} has flags {flags:#x} (no sub-databases or duplicates here)"));
        }
        if self.last_key.as_deref().is_some_and(|last| !self.before(last, key)) {
            return Err(format!("page {number} node {i}'s key is not after the key before it in the tree"));
        }
        match &mut self.last_key {
            Some(last) => {
                last.clear();
                last.extend_from_slice(key);
            }
            None => self.last_key = Some(key.to_vec()),
        }
        self.counted.entries += 1;
        if flags & BIG_DATA == 0 {
            if key_end as u64 + size > self.page_size as u64 {
                return Err(format!("page {number} node {i}'s value runs past the page"));
            }
            return Ok(());
        }
        if key_end + 8 > self.page_size {
            return Err(format!("page {number} node {i}'s overflow page number runs past the page"));
        }
        let first = u64_at(page, key_end);
        let mut header = [0u8; HEADER];
        if first > self.last_page {
            return Err(format!("page {number} node {i}'s value is on page {first}, past the last page in use"));
        }
        read_at(self.file, &mut header, first * self.page_size as u64, self.len, "an overflow page")?;
        let run = u64::from(u32_at(&header, 12));
        if u64_at(&header, 0) != first || u16_at(&header, 10) & !TRANSIENT != OVERFLOW {
            return Err(format!("page {first} (the value of page {number} node {i}) is not its overflow page"));
        }
        if run == 0 || run.saturating_mul(self.page_size as u64) < HEADER as u64 + size {
            return Err(format!("overflow page {first} spans {run} pages, too few for a value of {size} bytes"));
        }
        for page in first..first.saturating_add(run) {
            self.mark(page)?;
        }
        self.counted.overflow_pages += run;
        Ok(())
    }
}

fn tree_at(meta: &[u8], at: usize) -> Tree {
    Tree {
        depth: u16_at(meta, at + 6),
        branch_pages: u64_at(meta, at + 8),
        leaf_pages: u64_at(meta, at + 16),
        overflow_pages: u64_at(meta, at + 24),
        entries: u64_at(meta, at + 32),
        root: u64_at(meta, at + 40),
    }
}

fn read_at(file: &File, buf: &mut [u8], offset: u64, len: u64, what: &str) -> Result<(), String> {
    if offset.saturating_add(buf.len() as u64) > len {
        return Err(format!("{what} at byte {offset} lies past the end of the file ({len} bytes)"));
    }
    file.read_exact_at(buf, offset).map_err(|e| format!("reading {what} at byte {offset}: {e}"))
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}
