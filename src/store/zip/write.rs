//! A streaming writer of stored (uncompressed) archives: each entry is written as it is added,
//! only the central directory is kept in memory. Outputs are reproducible: fixed timestamps and
//! attributes, entries in the order added.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::io::{self, BufWriter, Write};
use std::path::Path;

use flate2::Crc;

use super::format::{
    CENTRAL_SIG, EOCD_SIG, FLAG_UTF8, LOCAL_SIG, METHOD_STORED, SATURATED_16, SATURATED_32, ZIP64_EOCD_LEN,
    ZIP64_EOCD_SIG, ZIP64_EXTRA_ID, ZIP64_LOCATOR_SIG,
};
use crate::error::ZipError;

/// Large enough that small chunks are batched into few writes.
const BUFFER: usize = 1 << 20;
/// Version needed to extract: 2.0 for plain stored entries, 4.5 for Zip64.
const VERSION_PLAIN: u16 = 20;
const VERSION_ZIP64: u16 = 45;
/// Made by Unix (3), spec version 4.5: Unix hosts then honour the file mode below.
const VERSION_MADE_BY: u16 = (3 << 8) | VERSION_ZIP64;
/// A regular file, rw-r--r--, in the high half as Unix hosts expect.
const EXTERNAL_ATTRIBUTES: u32 = 0o100_644 << 16;
/// 1980-01-01 00:00:00, the earliest DOS date: a fixed time keeps exports byte-for-byte
/// reproducible.
const DOS_TIME: u16 = 0;
const DOS_DATE: u16 = (1 << 5) | 1;

/// Writes a new zip archive of stored entries, with Zip64 records where sizes, offsets or the
/// entry count need them.
#[derive(Debug)]
pub(crate) struct ZipWriter {
    path: String,
    out: BufWriter<File>,
    /// Bytes written so far: the next local header's offset.
    offset: u64,
    entries: Vec<Written>,
    /// Hashes of the names added. A hit is confirmed by a scan of `entries`, so duplicate
    /// detection does not keep a second copy of every name.
    name_hashes: HashSet<u64>,
    /// Tests set this to give every entry and the end records Zip64 fields without writing 4 GiB.
    force_zip64: bool,
}

/// What the central directory needs to know about an entry already written.
#[derive(Debug)]
struct Written {
    name: String,
    crc32: u32,
    size: u64,
    offset: u64,
}

impl ZipWriter {
    /// Creates the archive at `path`, failing if the file exists (the caller writes to a
    /// temporary name and renames); errors name `shown`, the file it will be renamed to.
    pub(crate) fn create(path: &Path, shown: &Path) -> Result<ZipWriter, ZipError> {
        Self::create_with(path, shown, false)
    }

    /// Like [`ZipWriter::create`], but every entry gets Zip64 extra fields and the archive Zip64
    /// end records, as if every size and offset were huge.
    #[cfg(test)]
    pub(super) fn create_forcing_zip64(path: &Path) -> Result<ZipWriter, ZipError> {
        Self::create_with(path, path, true)
    }

    fn create_with(path: &Path, shown: &Path, force_zip64: bool) -> Result<ZipWriter, ZipError> {
        let display = shown.display().to_string();
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|source| ZipError::Io { path: display.clone(), source })?;
        Ok(ZipWriter {
            path: display,
            out: BufWriter::with_capacity(BUFFER, file),
            offset: 0,
            entries: Vec::new(),
            name_hashes: HashSet::new(),
            force_zip64,
        })
    }

    /// Appends one stored entry. Refuses a name already added ([`ZipError::DuplicateName`]) and
    /// one too long for a zip header, before writing anything.
    pub(crate) fn add(&mut self, name: &str, data: &[u8]) -> Result<(), ZipError> {
        let name_len = u16::try_from(name.len())
            .map_err(|_| ZipError::NameTooLong { path: self.path.clone(), len: name.len() })?;
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(name);
        if !self.name_hashes.insert(hash) && self.entries.iter().any(|e| e.name == name) {
            return Err(ZipError::DuplicateName { path: self.path.clone(), entry: name.to_owned() });
        }
        let mut crc = Crc::new();
        crc.update(data);
        let entry = Written { name: name.to_owned(), crc32: crc.sum(), size: data.len() as u64, offset: self.offset };

        let sizes64 = self.force_zip64 || entry.size >= u64::from(SATURATED_32);
        let mut header = Vec::with_capacity(30 + name.len() + 20);
        put32(&mut header, LOCAL_SIG);
        put16(&mut header, self.version_needed(&entry));
        put16(&mut header, flags(name));
        put16(&mut header, METHOD_STORED);
        put16(&mut header, DOS_TIME);
        put16(&mut header, DOS_DATE);
        put32(&mut header, entry.crc32);
        let size32 = if sizes64 { SATURATED_32 } else { low32(entry.size) };
        put32(&mut header, size32);
        put32(&mut header, size32);
        put16(&mut header, name_len);
        // A local Zip64 field must hold both sizes (APPNOTE 4.5.3); the offset is not in it.
        put16(&mut header, if sizes64 { 20 } else { 0 });
        header.extend_from_slice(name.as_bytes());
        if sizes64 {
            put16(&mut header, ZIP64_EXTRA_ID);
            put16(&mut header, 16);
            put64(&mut header, entry.size);
            put64(&mut header, entry.size);
        }
        self.write(&header)?;
        self.write(data)?;
        self.entries.push(entry);
        Ok(())
    }

    /// Writes the central directory and end records, flushes and syncs the file; returns the
    /// archive's size in bytes.
    pub(crate) fn finish(mut self) -> Result<u64, ZipError> {
        let directory_offset = self.offset;
        let entries = std::mem::take(&mut self.entries);
        for entry in &entries {
            let record = self.central_record(entry);
            self.write(&record)?;
        }
        let directory_size = self.offset - directory_offset;
        let count = entries.len() as u64;
        let zip64 = self.force_zip64
            || count >= u64::from(SATURATED_16)
            || directory_offset >= u64::from(SATURATED_32)
            || directory_size >= u64::from(SATURATED_32);
        let mut end = Vec::with_capacity(ZIP64_EOCD_LEN as usize + 20 + 22);
        if zip64 {
            let record_offset = self.offset;
            put32(&mut end, ZIP64_EOCD_SIG);
            put64(&mut end, ZIP64_EOCD_LEN - 12);
            put16(&mut end, VERSION_MADE_BY);
            put16(&mut end, VERSION_ZIP64);
            put32(&mut end, 0);
            put32(&mut end, 0);
            put64(&mut end, count);
            put64(&mut end, count);
            put64(&mut end, directory_size);
            put64(&mut end, directory_offset);
            put32(&mut end, ZIP64_LOCATOR_SIG);
            put32(&mut end, 0);
            put64(&mut end, record_offset);
            put32(&mut end, 1);
        }
        // Values that do not fit are saturated, pointing readers at the Zip64 record; the others
        // stay exact, as readers ignoring Zip64 expect.
        let count16 = if self.force_zip64 { SATURATED_16 } else { u16::try_from(count).unwrap_or(SATURATED_16) };
        let saturate =
            |value: u64| if self.force_zip64 { SATURATED_32 } else { u32::try_from(value).unwrap_or(SATURATED_32) };
        put32(&mut end, EOCD_SIG);
        put16(&mut end, 0);
        put16(&mut end, 0);
        put16(&mut end, count16);
        put16(&mut end, count16);
        put32(&mut end, saturate(directory_size));
        put32(&mut end, saturate(directory_offset));
        put16(&mut end, 0);
        self.write(&end)?;
        let io = |source| ZipError::Io { path: self.path.clone(), source };
        let file = self.out.into_inner().map_err(|e| io(e.into_error()))?;
        file.sync_all().map_err(io)?;
        Ok(self.offset)
    }

    /// The central directory record of `entry`, with a Zip64 field for what does not fit.
    fn central_record(&self, entry: &Written) -> Vec<u8> {
        let sizes64 = self.force_zip64 || entry.size >= u64::from(SATURATED_32);
        let offset64 = self.force_zip64 || entry.offset >= u64::from(SATURATED_32);
        let mut zip64 = Vec::new();
        if sizes64 {
            put64(&mut zip64, entry.size);
            put64(&mut zip64, entry.size);
        }
        if offset64 {
            put64(&mut zip64, entry.offset);
        }
        let mut record = Vec::with_capacity(46 + entry.name.len() + 4 + zip64.len());
        put32(&mut record, CENTRAL_SIG);
        put16(&mut record, VERSION_MADE_BY);
        put16(&mut record, self.version_needed(entry));
        put16(&mut record, flags(&entry.name));
        put16(&mut record, METHOD_STORED);
        put16(&mut record, DOS_TIME);
        put16(&mut record, DOS_DATE);
        put32(&mut record, entry.crc32);
        let size32 = if sizes64 { SATURATED_32 } else { low32(entry.size) };
        put32(&mut record, size32);
        put32(&mut record, size32);
        // add() refused longer names.
        put16(&mut record, u16::try_from(entry.name.len()).unwrap_or(u16::MAX));
        put16(&mut record, if zip64.is_empty() { 0 } else { zip64.len() as u16 + 4 });
        put16(&mut record, 0); // comment length
        put16(&mut record, 0); // disk number start
        put16(&mut record, 0); // internal attributes
        put32(&mut record, EXTERNAL_ATTRIBUTES);
        put32(&mut record, if offset64 { SATURATED_32 } else { low32(entry.offset) });
        record.extend_from_slice(entry.name.as_bytes());
        if !zip64.is_empty() {
            put16(&mut record, ZIP64_EXTRA_ID);
            put16(&mut record, zip64.len() as u16);
            record.extend_from_slice(&zip64);
        }
        record
    }

    /// 4.5 if any of the entry's sizes or its offset needs Zip64, else 2.0.
    fn version_needed(&self, entry: &Written) -> u16 {
        let limit = u64::from(SATURATED_32);
        if self.force_zip64 || entry.size >= limit || entry.offset >= limit {
            VERSION_ZIP64
        } else {
            VERSION_PLAIN
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), ZipError> {
        let end = self.offset.checked_add(bytes.len() as u64).ok_or_else(|| ZipError::Io {
            path: self.path.clone(),
            source: io::Error::new(io::ErrorKind::FileTooLarge, "a zip archive cannot exceed 2^64 bytes"),
        })?;
        self.out.write_all(bytes).map_err(|source| ZipError::Io { path: self.path.clone(), source })?;
        self.offset = end;
        Ok(())
    }
}

/// The UTF-8 flag for a non-ASCII name; ASCII names carry no flag, as Python's zipfile writes them.
fn flags(name: &str) -> u16 {
    if name.is_ascii() {
        0
    } else {
        FLAG_UTF8
    }
}

/// `value` for a 32-bit field the caller has checked it fits (else saturated, never truncated).
fn low32(value: u64) -> u32 {
    u32::try_from(value).unwrap_or(SATURATED_32)
}

fn put16(buf: &mut Vec<u8>, value: u16) {
    buf.extend_from_slice(&value.to_le_bytes());
}

fn put32(buf: &mut Vec<u8>, value: u32) {
    buf.extend_from_slice(&value.to_le_bytes());
}

fn put64(buf: &mut Vec<u8>, value: u64) {
    buf.extend_from_slice(&value.to_le_bytes());
}
