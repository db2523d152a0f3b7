//! Zip archives built byte by byte, so tests can make the ones no zip library would write: any
//! entry name bytes, sizes that lie, entries that repeat. Stored entries only; CRC-32 computed
//! unless told otherwise.

/// One entry of a crafted archive.
pub struct Crafted<'a> {
    pub name: &'a [u8],
    pub data: &'a [u8],
    /// The uncompressed size to declare (default: the data's length).
    pub declared_size: Option<u32>,
    /// The CRC-32 to declare (default: the data's).
    pub crc: Option<u32>,
}

impl<'a> Crafted<'a> {
    pub fn new(name: &'a [u8], data: &'a [u8]) -> Crafted<'a> {
        Crafted { name, data, declared_size: None, crc: None }
    }
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// The archive's bytes.
pub fn archive(entries: &[Crafted<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for e in entries {
        let offset = out.len() as u32;
        let size = e.declared_size.unwrap_or(e.data.len() as u32);
        let crc = e.crc.unwrap_or_else(|| crc32(e.data));
        let header = |sig: u32, central_entry: bool| {
            let mut h = Vec::new();
            h.extend(sig.to_le_bytes());
            if central_entry {
                h.extend(20u16.to_le_bytes()); // made by
            }
            h.extend(20u16.to_le_bytes()); // needed
            h.extend(0x0800u16.to_le_bytes()); // UTF-8 flag
            h.extend(0u16.to_le_bytes()); // stored
            h.extend(0u32.to_le_bytes()); // time, date
            h.extend(crc.to_le_bytes());
            h.extend((e.data.len() as u32).to_le_bytes()); // compressed
            h.extend(size.to_le_bytes());
            h.extend((e.name.len() as u16).to_le_bytes());
            h.extend(0u16.to_le_bytes()); // extra
            if central_entry {
                h.extend([0u8; 6]); // comment length, disk, internal attributes
                h.extend(0u32.to_le_bytes()); // external attrs
                h.extend(offset.to_le_bytes());
            }
            h.extend(e.name);
            h
        };
        out.extend(header(0x0403_4b50, false));
        out.extend(e.data);
        central.extend(header(0x0201_4b50, true));
    }
    let cd_offset = out.len() as u32;
    out.extend(&central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0u8; 4]);
    out.extend((entries.len() as u16).to_le_bytes());
    out.extend((entries.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(cd_offset.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}
