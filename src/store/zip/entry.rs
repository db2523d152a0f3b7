//! Reading one entry's bytes: the local header is checked against the central directory (name,
//! method, CRC-32, sizes), the data must stay inside the span the layout check gave the entry,
//! and the output is verified (exact size, CRC-32) before it is returned.

use std::io::Read;

use flate2::read::DeflateDecoder;
use flate2::Crc;

use super::format::{
    escape, Fields, FLAG_DATA_DESCRIPTOR, LOCAL_LEN, LOCAL_SIG, METHOD_DEFLATED, METHOD_STORED, SATURATED_32,
};
use super::read::{Method, ZipEntry, ZipReader};
use super::source::Range;
use crate::error::ZipError;

/// Inflated output starts with at most this much room: the declared size is within the limits
/// but still unproven, and a lying one should cost no more than the real output.
const INITIAL_CAPACITY: u64 = 16 << 20;

impl ZipReader {
    /// The entry's bytes, verified: exactly `size` bytes, matching the CRC-32. Safe to call from
    /// several threads at once.
    pub(crate) fn read(&self, entry: &ZipEntry) -> Result<Vec<u8>, ZipError> {
        let data_start = self.local_header(entry)?;
        let data_end = data_start.checked_add(entry.compressed_size).filter(|&end| end <= entry.data_limit);
        let Some(data_end) = data_end else { return Err(self.overlap(entry)) };
        let bytes = match entry.method {
            Method::Stored => {
                let len = self.in_memory(entry, entry.size)?;
                self.source.read_vec(data_start, len).map_err(|source| self.io(source))?
            }
            Method::Deflated => self.inflate(entry, data_start, data_end)?,
        };
        let mut crc = Crc::new();
        crc.update(&bytes);
        if crc.sum() != entry.crc32 {
            return Err(ZipError::CrcMismatch {
                path: self.path.clone(),
                entry: entry.name.clone(),
                declared: entry.crc32,
                computed: crc.sum(),
            });
        }
        Ok(bytes)
    }

    /// Checks the entry's local file header and returns where its data starts.
    fn local_header(&self, entry: &ZipEntry) -> Result<u64, ZipError> {
        let mut fixed = [0; LOCAL_LEN as usize];
        self.source.read_exact_at(&mut fixed, entry.header_offset).map_err(|source| self.io(source))?;
        let mut f = Fields::new(&fixed);
        let malformed = |reason: &str| ZipError::MalformedEntry {
            path: self.path.clone(),
            entry: entry.name.clone(),
            reason: reason.to_owned(),
        };
        if f.u32() != Some(LOCAL_SIG) {
            return Err(malformed("no local file header where the central directory points"));
        }
        let cut = || malformed("local file header cut off");
        let (_needed, flags, method) = (f.u16().ok_or_else(cut)?, f.u16().ok_or_else(cut)?, f.u16().ok_or_else(cut)?);
        let (_time, _date) = (f.u16().ok_or_else(cut)?, f.u16().ok_or_else(cut)?);
        let (crc32, compressed_size, size) =
            (f.u32().ok_or_else(cut)?, f.u32().ok_or_else(cut)?, f.u32().ok_or_else(cut)?);
        let (name_len, extra_len) = (f.u16().ok_or_else(cut)?, f.u16().ok_or_else(cut)?);
        let expected = match entry.method {
            Method::Stored => METHOD_STORED,
            Method::Deflated => METHOD_DEFLATED,
        };
        if method != expected {
            return Err(malformed("the local header names another compression method"));
        }
        // The local header must describe the same entry as the central record: a damaged
        // central directory can point one entry at another's header, and the bytes there would
        // pass the CRC check when the record carries that other entry's CRC. With a data
        // descriptor (flag bit 3) the local fields may be zero; a saturated size is in a Zip64
        // extra field, whose values the central record already carries.
        let descriptor = flags & FLAG_DATA_DESCRIPTOR != 0;
        let agrees = |local: u64, central: u64, saturable: bool| {
            local == central || (descriptor && local == 0) || (saturable && local == u64::from(SATURATED_32))
        };
        if !agrees(crc32.into(), entry.crc32.into(), false) {
            return Err(malformed(&format!(
                "the local header declares CRC-32 {crc32:08x}, the central directory {:08x}",
                entry.crc32
            )));
        }
        if !agrees(compressed_size.into(), entry.compressed_size, true) || !agrees(size.into(), entry.size, true) {
            return Err(malformed(&format!(
                "the local header declares {compressed_size} bytes stored and {size} uncompressed, the central \
                 directory {} and {}",
                entry.compressed_size, entry.size
            )));
        }
        // header_offset + 30 + name + compressed data fit in data_limit (checked at open), so a
        // name of the expected length is inside the file; another length is a mismatch anyway.
        let name_start = entry.header_offset.checked_add(LOCAL_LEN).ok_or_else(|| self.overlap(entry))?;
        let name_end = name_start.checked_add(name_len.into()).filter(|&end| end <= entry.data_limit);
        let Some(name_end) = name_end else { return Err(self.overlap(entry)) };
        let local_name = self.source.read_vec(name_start, usize::from(name_len)).map_err(|source| self.io(source))?;
        if local_name != entry.name.as_bytes() {
            return Err(ZipError::NameMismatch {
                path: self.path.clone(),
                entry: entry.name.clone(),
                local_name: escape(&local_name),
            });
        }
        name_end.checked_add(extra_len.into()).ok_or_else(|| self.overlap(entry))
    }

    /// Inflates `[start, end)` into at most `size + 1` bytes, so that a lying size shows without
    /// unbounded output.
    fn inflate(&self, entry: &ZipEntry, start: u64, end: u64) -> Result<Vec<u8>, ZipError> {
        // The whole output must be addressable, not only the first allocation.
        self.in_memory(entry, entry.size)?;
        let capacity = self.in_memory(entry, entry.size.min(INITIAL_CAPACITY))?;
        let cap = entry.size.saturating_add(1);
        let range = Range { source: &self.source, pos: start, end, failed: false };
        let mut decoder = DeflateDecoder::new(range);
        let mut out = Vec::with_capacity(capacity);
        if let Err(e) = Read::by_ref(&mut decoder).take(cap).read_to_end(&mut out) {
            if decoder.get_ref().failed {
                return Err(self.io(e));
            }
            return Err(ZipError::MalformedEntry {
                path: self.path.clone(),
                entry: entry.name.clone(),
                reason: format!("corrupt deflate data: {e}"),
            });
        }
        let actual = out.len() as u64;
        if actual != entry.size {
            return Err(ZipError::SizeMismatch {
                path: self.path.clone(),
                entry: entry.name.clone(),
                declared: entry.size,
                actual,
            });
        }
        Ok(out)
    }

    /// `len` as a `usize`, or [`ZipError::TooLarge`] where the platform cannot hold it.
    fn in_memory(&self, entry: &ZipEntry, len: u64) -> Result<usize, ZipError> {
        usize::try_from(len).map_err(|_| ZipError::TooLarge {
            path: self.path.clone(),
            entry: entry.name.clone(),
            size: entry.size,
            limit: usize::MAX as u64,
        })
    }

    fn overlap(&self, entry: &ZipEntry) -> ZipError {
        ZipError::Overlap {
            path: self.path.clone(),
            entry: entry.name.clone(),
            other: "the next entry's local header or the central directory".to_owned(),
        }
    }

    fn io(&self, source: std::io::Error) -> ZipError {
        ZipError::Io { path: self.path.clone(), source }
    }
}
