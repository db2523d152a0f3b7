//! Finding the central directory from the end of an untrusted archive: the end record (and the
//! Zip64 end record and locator), which must agree with each other and leave no gap before the
//! directory.

use super::format::{
    Fields, EOCD_LEN, EOCD_SIG, MAX_EOCD_SEARCH, SATURATED_16, SATURATED_32, ZIP64_EOCD_LEN, ZIP64_EOCD_SIG,
    ZIP64_LOCATOR_LEN, ZIP64_LOCATOR_SIG,
};
use super::read::Opening;
use crate::error::ZipError;

/// Where the central directory lies and how many entries it declares.
#[derive(Debug, Clone, Copy)]
pub(super) struct Directory {
    pub(super) offset: u64,
    pub(super) size: u64,
    pub(super) count: u64,
}

impl Opening<'_> {
    /// Locates the central directory through the end record (and the Zip64 end record when a
    /// locator precedes it), insisting that the directory ends exactly where those records begin.
    pub(super) fn find_directory(&self) -> Result<Directory, ZipError> {
        let not_a_zip = || ZipError::NotAZip { path: self.path.to_owned() };
        let len = self.source.len();
        let tail_len = len.min(MAX_EOCD_SEARCH);
        let tail_start = len - tail_len;
        let tail = self.read(tail_start, tail_len, "the end of central directory record")?;
        let at = find_eocd(&tail).ok_or_else(not_a_zip)?;
        let eocd_pos = tail_start + at as u64;
        let mut f = Fields::new(tail.get(at..).ok_or_else(not_a_zip)?);
        let cut = || self.malformed("the end of central directory record is cut off");
        let _signature = f.u32().ok_or_else(cut)?;
        let (disk, cd_disk) = (f.u16().ok_or_else(cut)?, f.u16().ok_or_else(cut)?);
        let (on_disk, total) = (f.u16().ok_or_else(cut)?, f.u16().ok_or_else(cut)?);
        let (size, offset) = (f.u32().ok_or_else(cut)?, f.u32().ok_or_else(cut)?);
        if (disk != 0 && disk != SATURATED_16) || (cd_disk != 0 && cd_disk != SATURATED_16) || on_disk != total {
            return Err(self.malformed("the archive spans several disks"));
        }
        let classic = Directory { offset: offset.into(), size: size.into(), count: total.into() };
        let (directory, records_start) = match self.zip64_directory(eocd_pos)? {
            None => (classic, eocd_pos),
            Some((zip64, zip64_pos)) => {
                // Values that fit must agree: readers that ignore Zip64 must not see another archive.
                let agrees = |value: u64, saturated: u64, zip64: u64| value == saturated || value == zip64;
                if !agrees(classic.count, SATURATED_16.into(), zip64.count)
                    || !agrees(classic.size, SATURATED_32.into(), zip64.size)
                    || !agrees(classic.offset, SATURATED_32.into(), zip64.offset)
                {
                    return Err(self.malformed("the end record and the Zip64 end record disagree"));
                }
                (zip64, zip64_pos)
            }
        };
        match directory.offset.checked_add(directory.size) {
            Some(end) if end == records_start => Ok(directory),
            Some(end) if end < records_start => Err(self.malformed(format!(
                "{} unexplained bytes lie between the central directory and the end record \
                 (a prefixed or damaged archive)",
                records_start - end
            ))),
            Some(end) if end <= len => Err(self.malformed("the central directory overlaps the end record")),
            _ => Err(ZipError::Truncated { path: self.path.to_owned(), what: "the central directory" }),
        }
    }

    /// The directory as the Zip64 end record gives it, and where that record starts, if a Zip64
    /// locator sits right before the end record at `eocd_pos`.
    fn zip64_directory(&self, eocd_pos: u64) -> Result<Option<(Directory, u64)>, ZipError> {
        let Some(locator_pos) = eocd_pos.checked_sub(ZIP64_LOCATOR_LEN) else { return Ok(None) };
        let locator = self.read(locator_pos, ZIP64_LOCATOR_LEN, "the Zip64 end of central directory locator")?;
        let mut f = Fields::new(&locator);
        if f.u32() != Some(ZIP64_LOCATOR_SIG) {
            return Ok(None);
        }
        let cut = || self.malformed("the Zip64 end of central directory locator is cut off");
        let _disk = f.u32().ok_or_else(cut)?;
        let record_pos = f.u64().ok_or_else(cut)?;
        if record_pos.checked_add(ZIP64_EOCD_LEN).is_none_or(|end| end > locator_pos) {
            return Err(self.malformed("the Zip64 end record would not end before its locator"));
        }
        let record = self.read(record_pos, ZIP64_EOCD_LEN, "the Zip64 end of central directory record")?;
        let mut f = Fields::new(&record);
        let cut = || self.malformed("the Zip64 end of central directory record is cut off");
        if f.u32() != Some(ZIP64_EOCD_SIG) {
            return Err(self.malformed("no Zip64 end record where the Zip64 locator points"));
        }
        // The size counts the bytes after its own field, extensible data included, and nothing
        // may sit between the record and the locator.
        let rest = f.u64().ok_or_else(cut)?;
        if record_pos.checked_add(12).and_then(|p| p.checked_add(rest)) != Some(locator_pos) {
            return Err(self.malformed("the Zip64 end record's size does not reach its locator"));
        }
        let (_made_by, _needed) = (f.u16().ok_or_else(cut)?, f.u16().ok_or_else(cut)?);
        let (disk, cd_disk) = (f.u32().ok_or_else(cut)?, f.u32().ok_or_else(cut)?);
        let (on_disk, count) = (f.u64().ok_or_else(cut)?, f.u64().ok_or_else(cut)?);
        let (size, offset) = (f.u64().ok_or_else(cut)?, f.u64().ok_or_else(cut)?);
        if disk != 0 || cd_disk != 0 || on_disk != count {
            return Err(self.malformed("the archive spans several disks"));
        }
        Ok(Some((Directory { offset, size, count }, record_pos)))
    }
}

/// Where the end of central directory record starts in `tail` (the file's last bytes): the last
/// signature whose comment ends exactly at the end of the file, else the last one whose comment
/// fits (trailing bytes after an archive are tolerated, as Python's zipfile does).
fn find_eocd(tail: &[u8]) -> Option<usize> {
    let last = tail.len().checked_sub(EOCD_LEN as usize)?;
    let mut fitting = None;
    for at in (0..=last).rev() {
        let mut f = Fields::new(tail.get(at..)?);
        if f.u32() != Some(EOCD_SIG) {
            continue;
        }
        let comment_len = Fields::new(tail.get(at + 20..)?).u16()?;
        let end = at + EOCD_LEN as usize + usize::from(comment_len);
        if end == tail.len() {
            return Some(at);
        }
        if end < tail.len() && fitting.is_none() {
            fitting = Some(at);
        }
    }
    fitting
}
