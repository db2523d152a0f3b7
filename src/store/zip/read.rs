//! Opening an untrusted archive: reading and checking the central directory (`end.rs` finds it),
//! and refusing anything ambiguous, oversized or overlapping before a single entry is inflated.

use std::path::Path;

use super::end::Directory;
use super::format::{
    escape, Fields, CENTRAL_LEN, CENTRAL_SIG, FLAG_ENCRYPTED, LOCAL_LEN, METHOD_DEFLATED, METHOD_STORED, SATURATED_16,
    SATURATED_32, ZIP64_EXTRA_ID,
};
use super::source::Source;
use crate::error::ZipError;

/// Entries above this size must not expand more than [`ZipLimits::max_ratio`] times; below it,
/// tiny entries of zeros (fill-value chunks) legitimately compress a thousandfold.
const BOMB_FLOOR: u64 = 1 << 20;

/// How much a [`ZipReader`] accepts from an archive.
#[derive(Debug, Clone)]
pub(crate) struct ZipLimits {
    /// Largest uncompressed size of one entry, in bytes.
    pub max_entry_size: u64,
    /// An entry larger than 1 MiB that expands more than this many times is refused as a zip bomb.
    pub max_ratio: u64,
    /// Most entries an archive may declare.
    pub max_entries: u64,
}

impl Default for ZipLimits {
    fn default() -> Self {
        ZipLimits { max_entry_size: 4 << 30, max_ratio: 1000, max_entries: 10_000_000 }
    }
}

/// How an entry's bytes are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    /// Uncompressed (method 0).
    Stored,
    /// Raw deflate (method 8).
    Deflated,
}

/// One file in an archive, as its central directory describes it (already checked against the
/// limits and the archive's layout).
#[derive(Debug, Clone)]
pub(crate) struct ZipEntry {
    /// The name, exactly as stored (no normalisation: the caller validates keys).
    pub name: String,
    /// Uncompressed size in bytes.
    pub size: u64,
    /// Size of the stored data in bytes.
    pub compressed_size: u64,
    /// CRC-32 of the uncompressed bytes.
    pub crc32: u32,
    /// Compression method.
    pub method: Method,
    /// Where the entry's local file header starts.
    pub(super) header_offset: u64,
    /// Where the next entry's local header (or the central directory) starts: the entry's header
    /// and data must end by here.
    pub(super) data_limit: u64,
}

/// An open archive whose central directory has been read and checked.
#[derive(Debug)]
pub(crate) struct ZipReader {
    /// The archive's path, for error messages.
    pub(super) path: String,
    pub(super) source: Source,
    entries: Vec<ZipEntry>,
    duplicates: Vec<String>,
}

impl ZipReader {
    /// Opens the archive at `path` and reads its central directory, refusing it if anything is
    /// malformed, encrypted, over `limits` or overlapping.
    pub(crate) fn open(path: &Path, limits: ZipLimits) -> Result<ZipReader, ZipError> {
        let display = path.display().to_string();
        let source = crate::store::special::open_regular_to_read(path)
            .and_then(Source::new)
            .map_err(|source| ZipError::Io { path: display.clone(), source })?;
        let opening = Opening { path: &display, source: &source, limits: &limits };
        let directory = opening.find_directory()?;
        let mut all = opening.parse_directory(directory)?;
        opening.check_layout(&mut all, directory.offset)?;
        let (entries, duplicates) = keep_last(all);
        Ok(ZipReader { path: display, source, entries, duplicates })
    }

    /// Entries in central-directory order, directories (names ending in '/') left out, and for
    /// names that occur several times only the last one (zarr-python's ZipStore semantics).
    pub(crate) fn entries(&self) -> &[ZipEntry] {
        &self.entries
    }

    /// Names that occurred more than once, sorted (the caller warns).
    pub(crate) fn duplicates(&self) -> &[String] {
        &self.duplicates
    }
}

/// The state of [`ZipReader::open`], so the steps can build errors naming the archive.
pub(super) struct Opening<'a> {
    pub(super) path: &'a str,
    pub(super) source: &'a Source,
    limits: &'a ZipLimits,
}

impl Opening<'_> {
    pub(super) fn malformed(&self, reason: impl Into<String>) -> ZipError {
        ZipError::Malformed { path: self.path.to_owned(), reason: reason.into() }
    }

    fn entry_error(&self, entry: &str, reason: impl Into<String>) -> ZipError {
        ZipError::MalformedEntry { path: self.path.to_owned(), entry: entry.to_owned(), reason: reason.into() }
    }

    /// Reads `len` bytes at `offset`, or reports `what` as truncated if they are not in the file.
    pub(super) fn read(&self, offset: u64, len: u64, what: &'static str) -> Result<Vec<u8>, ZipError> {
        let truncated = || ZipError::Truncated { path: self.path.to_owned(), what };
        if offset.checked_add(len).is_none_or(|end| end > self.source.len()) {
            return Err(truncated());
        }
        let len = usize::try_from(len).map_err(|_| truncated())?;
        self.source.read_vec(offset, len).map_err(|source| ZipError::Io { path: self.path.to_owned(), source })
    }

    /// Reads and checks every central directory entry (directories and duplicates included).
    fn parse_directory(&self, directory: Directory) -> Result<Vec<ZipEntry>, ZipError> {
        let Directory { offset, size, count } = directory;
        if count > self.limits.max_entries {
            return Err(ZipError::TooManyEntries { path: self.path.to_owned(), count, limit: self.limits.max_entries });
        }
        // Checked before anything is allocated for the entries, so a lying count costs nothing.
        if count.checked_mul(CENTRAL_LEN as u64).is_none_or(|least| least > size) {
            return Err(self.malformed(format!("{count} entries cannot fit a central directory of {size} bytes")));
        }
        let bytes = self.read(offset, size, "the central directory")?;
        let mut f = Fields::new(&bytes);
        // count <= size / 46 and size bytes were allocated, so this fits usize.
        let mut entries = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
        for index in 0..count {
            entries.push(self.parse_entry(&mut f, index)?);
        }
        if f.remaining() != 0 {
            return Err(
                self.malformed(format!("{} bytes follow the {count} entries the end record declares", f.remaining()))
            );
        }
        Ok(entries)
    }

    /// Reads central directory entry number `index` from `f` and checks it on its own.
    fn parse_entry(&self, f: &mut Fields<'_>, index: u64) -> Result<ZipEntry, ZipError> {
        if f.u32() != Some(CENTRAL_SIG) {
            return Err(self.malformed(format!("central directory entry {index} has no valid signature")));
        }
        let header = CentralHeader::parse(f)
            .ok_or_else(|| self.malformed(format!("central directory entry {index} is cut off")))?;
        // The UTF-8 flag is not consulted: Python sets it only for non-ASCII names and some
        // tools never set it, while any other encoding cannot be a Zarr key anyway.
        let name = std::str::from_utf8(header.name)
            .map_err(|_| ZipError::NonUtf8Name { path: self.path.to_owned(), name: escape(header.name) })?
            .to_owned();
        if header.flags & FLAG_ENCRYPTED != 0 {
            return Err(ZipError::Encrypted { path: self.path.to_owned(), entry: name });
        }
        let method = match header.method {
            METHOD_STORED => Method::Stored,
            METHOD_DEFLATED => Method::Deflated,
            method => return Err(ZipError::UnsupportedMethod { path: self.path.to_owned(), entry: name, method }),
        };
        let zip64 = zip64_extra(header.extra).map_err(|reason| self.entry_error(&name, reason))?;
        let mut z = Fields::new(zip64.unwrap_or_default());
        let missing = || self.entry_error(&name, "a saturated field has no value in a Zip64 extra field");
        // The Zip64 field holds only the saturated values, in this order.
        let mut widen = |value: u32| match value {
            SATURATED_32 => z.u64().ok_or_else(missing),
            value => Ok(u64::from(value)),
        };
        let size = widen(header.size)?;
        let compressed_size = widen(header.compressed_size)?;
        let header_offset = widen(header.offset)?;
        let disk = match header.disk {
            SATURATED_16 => z.u32().ok_or_else(missing)?,
            disk => u32::from(disk),
        };
        if disk != 0 {
            return Err(self.entry_error(&name, "the entry starts on another disk"));
        }
        let entry = ZipEntry { name, size, compressed_size, crc32: header.crc32, method, header_offset, data_limit: 0 };
        self.check_limits(&entry)?;
        Ok(entry)
    }

    /// Refuses an entry too large, too compressible, or stored with two different sizes.
    fn check_limits(&self, entry: &ZipEntry) -> Result<(), ZipError> {
        let (size, compressed_size) = (entry.size, entry.compressed_size);
        if size > self.limits.max_entry_size {
            let limit = self.limits.max_entry_size;
            return Err(ZipError::TooLarge { path: self.path.to_owned(), entry: entry.name.clone(), size, limit });
        }
        // u128 holds the product exactly, so no ratio or size can overflow it.
        if size > BOMB_FLOOR && u128::from(size) > u128::from(self.limits.max_ratio) * u128::from(compressed_size) {
            return Err(ZipError::ZipBomb {
                path: self.path.to_owned(),
                entry: entry.name.clone(),
                size,
                compressed_size,
                max_ratio: self.limits.max_ratio,
            });
        }
        if entry.method == Method::Stored && size != compressed_size {
            let (path, entry) = (self.path.to_owned(), entry.name.clone());
            return Err(ZipError::SizeMismatch { path, entry, declared: size, actual: compressed_size });
        }
        Ok(())
    }

    /// Checks that no entry's local header and data (as far as the central directory tells)
    /// overlap the next entry or the central directory, and records each entry's end limit.
    fn check_layout(&self, entries: &mut [ZipEntry], directory_offset: u64) -> Result<(), ZipError> {
        let mut order: Vec<usize> = (0..entries.len()).collect();
        order.sort_unstable_by_key(|&i| entries.get(i).map(|e| e.header_offset));
        let mut limits = Vec::with_capacity(order.len());
        for (rank, &i) in order.iter().enumerate() {
            let next = order.get(rank + 1).and_then(|&j| entries.get(j));
            let limit = next.map_or(directory_offset, |next| next.header_offset);
            let Some(entry) = entries.get(i) else { continue };
            // The local name must equal the central one, so its length is known; the local extra
            // field may differ and is checked when the entry is read.
            let least_end = entry
                .header_offset
                .checked_add(LOCAL_LEN)
                .and_then(|end| end.checked_add(entry.name.len() as u64))
                .and_then(|end| end.checked_add(entry.compressed_size));
            if least_end.is_none_or(|end| end > limit) {
                let other =
                    next.map_or_else(|| "the central directory".to_owned(), |n| format!("entry \"{}\"", n.name));
                return Err(ZipError::Overlap { path: self.path.to_owned(), entry: entry.name.clone(), other });
            }
            limits.push((i, limit));
        }
        for (i, limit) in limits {
            if let Some(entry) = entries.get_mut(i) {
                entry.data_limit = limit;
            }
        }
        Ok(())
    }
}

/// The fixed fields of a central directory entry that the reader uses, and its name and extra
/// field (the entry's comment is skipped).
struct CentralHeader<'a> {
    flags: u16,
    method: u16,
    crc32: u32,
    compressed_size: u32,
    size: u32,
    disk: u16,
    offset: u32,
    name: &'a [u8],
    extra: &'a [u8],
}

impl<'a> CentralHeader<'a> {
    /// Parses the entry after its signature; `None` if it is cut off.
    fn parse(f: &mut Fields<'a>) -> Option<Self> {
        let (_made_by, _needed, flags, method) = (f.u16()?, f.u16()?, f.u16()?, f.u16()?);
        let (_time, _date) = (f.u16()?, f.u16()?);
        let (crc32, compressed_size, size) = (f.u32()?, f.u32()?, f.u32()?);
        let (name_len, extra_len, comment_len) = (f.u16()?, f.u16()?, f.u16()?);
        let (disk, _internal, _external, offset) = (f.u16()?, f.u16()?, f.u32()?, f.u32()?);
        let name = f.bytes(name_len.into())?;
        let extra = f.bytes(extra_len.into())?;
        let _comment = f.bytes(comment_len.into())?;
        Some(CentralHeader { flags, method, crc32, compressed_size, size, disk, offset, name, extra })
    }
}

/// The data of the Zip64 extended information extra field in `extra`, if there is one.
fn zip64_extra(extra: &[u8]) -> Result<Option<&[u8]>, &'static str> {
    let mut f = Fields::new(extra);
    let mut found = None;
    // Fewer than 4 trailing bytes are padding, as Python's zipfile and Info-ZIP treat them.
    while f.remaining() >= 4 {
        let (id, len) = (f.u16().ok_or("extra field cut off")?, f.u16().ok_or("extra field cut off")?);
        let data = f.bytes(len.into()).ok_or("an extra field runs past the end of the extra data")?;
        if id == ZIP64_EXTRA_ID {
            if found.is_some() {
                return Err("two Zip64 extra fields");
            }
            found = Some(data);
        }
    }
    Ok(found)
}

/// Leaves out directories and all but the last entry of each name; returns the kept entries in
/// their order and the repeated names, sorted.
fn keep_last(all: Vec<ZipEntry>) -> (Vec<ZipEntry>, Vec<String>) {
    let mut files: Vec<ZipEntry> = all.into_iter().filter(|e| !e.name.ends_with('/')).collect();
    // Sorting indices rather than hashing names avoids a second copy of every name.
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| files.get(a).map(|e| &e.name).cmp(&files.get(b).map(|e| &e.name)).then(a.cmp(&b)));
    let mut keep = vec![true; files.len()];
    let mut duplicates: Vec<String> = Vec::new();
    for pair in order.windows(2) {
        let &[a, b] = pair else { continue };
        let (Some(first), Some(second)) = (files.get(a), files.get(b)) else { continue };
        if first.name == second.name {
            if let Some(k) = keep.get_mut(a) {
                *k = false;
            }
            if duplicates.last() != Some(&first.name) {
                duplicates.push(first.name.clone());
            }
        }
    }
    let mut kept = keep.into_iter();
    files.retain(|_| kept.next().unwrap_or(true));
    (files, duplicates)
}
