//! The zip records' signatures, fixed sizes and field limits (PKWARE APPNOTE 6.3), and a
//! bounds-checked little-endian field reader shared by the reader and the tests.

/// Local file header signature ("PK\x03\x04").
pub(super) const LOCAL_SIG: u32 = 0x0403_4b50;
/// Central directory file header signature ("PK\x01\x02").
pub(super) const CENTRAL_SIG: u32 = 0x0201_4b50;
/// End of central directory record signature ("PK\x05\x06").
pub(super) const EOCD_SIG: u32 = 0x0605_4b50;
/// Zip64 end of central directory record signature ("PK\x06\x06").
pub(super) const ZIP64_EOCD_SIG: u32 = 0x0606_4b50;
/// Zip64 end of central directory locator signature ("PK\x06\x07").
pub(super) const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;

/// Fixed part of a local file header.
pub(super) const LOCAL_LEN: u64 = 30;
/// Fixed part of a central directory file header.
pub(super) const CENTRAL_LEN: usize = 46;
/// End of central directory record without its comment.
pub(super) const EOCD_LEN: u64 = 22;
/// Zip64 end of central directory record without an extensible data sector.
pub(super) const ZIP64_EOCD_LEN: u64 = 56;
/// Zip64 end of central directory locator.
pub(super) const ZIP64_LOCATOR_LEN: u64 = 20;
/// The archive comment's length is a u16, so the end record starts at most this far from the end.
pub(super) const MAX_EOCD_SEARCH: u64 = EOCD_LEN + 0xFFFF;

/// Header ID of the Zip64 extended information extra field.
pub(super) const ZIP64_EXTRA_ID: u16 = 0x0001;

/// A 32-bit size or offset field holding this value means "see the Zip64 field".
pub(super) const SATURATED_32: u32 = 0xFFFF_FFFF;
/// A 16-bit entry count holding this value means "see the Zip64 end record".
pub(super) const SATURATED_16: u16 = 0xFFFF;

/// General purpose flag: the entry is encrypted.
pub(super) const FLAG_ENCRYPTED: u16 = 1 << 0;
/// General purpose flag: the CRC-32 and sizes follow the data in a data descriptor, and the local
/// header may hold zeros for them.
pub(super) const FLAG_DATA_DESCRIPTOR: u16 = 1 << 3;
/// General purpose flag: the name (and comment) is UTF-8.
pub(super) const FLAG_UTF8: u16 = 1 << 11;

/// Compression method: stored.
pub(super) const METHOD_STORED: u16 = 0;
/// Compression method: deflate.
pub(super) const METHOD_DEFLATED: u16 = 8;

/// Reads little-endian fields from a byte slice front to back; every read is bounds-checked and
/// returns `None` past the end, so hostile lengths cannot cause a panic.
pub(super) struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    /// Reads from the start of `bytes`.
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Fields { rest: bytes }
    }

    /// The next `n` bytes.
    pub(super) fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Some(head)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.bytes(N)?.try_into().ok()
    }

    /// The next u16.
    pub(super) fn u16(&mut self) -> Option<u16> {
        self.array().map(u16::from_le_bytes)
    }

    /// The next u32.
    pub(super) fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }

    /// The next u64.
    pub(super) fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }

    /// How many bytes are left.
    pub(super) fn remaining(&self) -> usize {
        self.rest.len()
    }
}

/// `bytes` for display in an error: printable ASCII as is, everything else as `\xNN`.
pub(super) fn escape(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}
