//! numcodecs' 32-bit checksums, `numcodecs.crc32`, `numcodecs.adler32` and
//! `numcodecs.fletcher32` (Zarr v2 compressors or filters `{"id": "crc32"}`, ...): the bytes with
//! a little-endian checksum of them. `crc32` and `adler32` put it at the `location` their
//! configuration names (`"start"`, numcodecs' default, or `"end"`); `fletcher32` (HDF5's variant
//! of Fletcher's checksum over big-endian 16-bit words) always at the end. Decoding checks it.

use std::borrow::Cow;

use super::config::Config;
use super::registry::{Build, Example, Registration, V2Filter, V2};
use super::BytesToBytes;
use crate::error::CodecError;
use crate::metadata::NamedConfig;

pub(crate) const CRC32: &str = "numcodecs.crc32";
pub(crate) const ADLER32: &str = "numcodecs.adler32";
pub(crate) const FLETCHER32: &str = "numcodecs.fletcher32";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Algorithm {
    Crc32,
    Adler32,
    Fletcher32,
}

#[derive(Debug)]
pub(crate) struct Checksum32 {
    name: &'static str,
    algorithm: Algorithm,
    at_start: bool,
    meta: NamedConfig,
}

/// zlib's Adler-32.
fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 bytes is the longest run whose sums stay below 2^32 before the modulo.
    for block in data.chunks(5552) {
        for &byte in block {
            a += u32::from(byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// HDF5's `H5_checksum_fletcher32` (numcodecs' `Fletcher32`): big-endian 16-bit words, the sums
/// folded every 360 words, an odd last byte as the high byte of a word.
fn fletcher32(data: &[u8]) -> u32 {
    let fold = |s: u32| (s & 0xffff) + (s >> 16);
    let (mut sum1, mut sum2) = (0u32, 0u32);
    let even = data.len() & !1;
    let odd = data.get(even).copied();
    for block in data[..even].chunks(720) {
        for w in block.chunks_exact(2) {
            sum1 += (u32::from(w[0]) << 8) | u32::from(w[1]);
            sum2 += sum1;
        }
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    if let Some(last) = odd {
        sum1 += u32::from(last) << 8;
        sum2 += sum1;
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    sum1 = fold(sum1);
    sum2 = fold(sum2);
    (sum2 << 16) | sum1
}

impl Checksum32 {
    pub fn from_metadata(meta: &NamedConfig) -> Result<Checksum32, CodecError> {
        let (name, algorithm) = match meta.name.as_str() {
            CRC32 => (CRC32, Algorithm::Crc32),
            ADLER32 => (ADLER32, Algorithm::Adler32),
            FLETCHER32 => (FLETCHER32, Algorithm::Fletcher32),
            other => return Err(CodecError::UnknownCodec { name: other.to_owned() }),
        };
        let at_start = if algorithm == Algorithm::Fletcher32 {
            Config::new(name, meta, &[])?;
            false
        } else {
            let config = Config::new(name, meta, &["location"])?;
            match config.string("location")? {
                None | Some("start") => true,
                Some("end") => false,
                Some(other) => return Err(config.error("location", format!("\"{other}\" is not \"start\" or \"end\""))),
            }
        };
        Ok(Checksum32 { name, algorithm, at_start, meta: meta.clone() })
    }

    fn checksum(&self, data: &[u8]) -> u32 {
        match self.algorithm {
            Algorithm::Crc32 => {
                let mut crc = flate2::Crc::new();
                crc.update(data);
                crc.sum()
            }
            Algorithm::Adler32 => adler32(data),
            Algorithm::Fletcher32 => fletcher32(data),
        }
    }
}

impl BytesToBytes for Checksum32 {
    fn encode(&self, decoded: Cow<'_, [u8]>) -> Result<Vec<u8>, CodecError> {
        let sum = self.checksum(&decoded).to_le_bytes();
        let mut out = Vec::with_capacity(decoded.len() + 4);
        if self.at_start {
            out.extend_from_slice(&sum);
            out.extend_from_slice(&decoded);
        } else {
            out.extend_from_slice(&decoded);
            out.extend_from_slice(&sum);
        }
        Ok(out)
    }

    fn decode(&self, encoded: Cow<'_, [u8]>, max_decoded: u64) -> Result<Vec<u8>, CodecError> {
        if encoded.len() < 4 {
            return Err(CodecError::Corrupt {
                codec: self.name,
                reason: format!("{} bytes cannot hold a 4-byte checksum", encoded.len()),
                source: None,
            });
        }
        let (sum, data) = if self.at_start {
            encoded.split_at(4)
        } else {
            let (data, sum) = encoded.split_at(encoded.len() - 4);
            (sum, data)
        };
        if data.len() as u64 > max_decoded {
            return Err(CodecError::TooLarge { codec: self.name, limit: max_decoded });
        }
        let stored = u32::from_le_bytes(sum.try_into().expect("4 bytes"));
        let computed = self.checksum(data);
        if stored != computed {
            return Err(CodecError::ChecksumMismatch { codec: self.name, stored, computed });
        }
        Ok(data.to_vec())
    }

    fn max_encoded_size(&self, decoded: u64) -> u64 {
        decoded.saturating_add(4)
    }

    fn fixed_encoded_size(&self, decoded: u64) -> Option<u64> {
        Some(decoded.saturating_add(4))
    }

    fn to_metadata(&self) -> NamedConfig {
        self.meta.clone()
    }
}

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION_CRC32: Registration = Registration {
    names: &[CRC32],
    build: Build::BytesToBytes(|meta, _array, _encoded| Ok(Box::new(Checksum32::from_metadata(meta)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "int64",
        codecs: r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.crc32"}]"#,
    }),
    v2: Some(V2 {
        id: "crc32",
        compressor: Some(|p, _| p.kept(CRC32, &["location"])),
        filter: Some(V2Filter::Bytes(|p, _| p.kept(CRC32, &["location"]))),
    }),
    short: None,
};

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION_ADLER32: Registration = Registration {
    names: &[ADLER32],
    build: Build::BytesToBytes(|meta, _array, _encoded| Ok(Box::new(Checksum32::from_metadata(meta)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "int64",
        codecs: r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.adler32", "configuration": {"location": "end"}}]"#,
    }),
    v2: Some(V2 {
        id: "adler32",
        compressor: Some(|p, _| p.kept(ADLER32, &["location"])),
        filter: Some(V2Filter::Bytes(|p, _| p.kept(ADLER32, &["location"]))),
    }),
    short: None,
};

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION_FLETCHER32: Registration = Registration {
    names: &[FLETCHER32],
    build: Build::BytesToBytes(|meta, _array, _encoded| Ok(Box::new(Checksum32::from_metadata(meta)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "int64",
        codecs: r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.fletcher32"}]"#,
    }),
    v2: Some(V2 {
        id: "fletcher32",
        compressor: Some(|p, _| p.kept(FLETCHER32, &[])),
        filter: Some(V2Filter::Bytes(|p, _| p.kept(FLETCHER32, &[]))),
    }),
    short: None,
};

#[cfg(test)]
mod tests {
    use super::{adler32, fletcher32};

    #[test]
    fn checksums_match_zlib_and_numcodecs() {
        // zlib.adler32(b"Wikipedia") and numcodecs.Fletcher32 of the bytes below.
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        let data = [0u8, 0, 1, 0, 2, 0, 3, 0, 4, 0, 7];
        assert_eq!(fletcher32(&data).to_le_bytes(), [0x00, 0x11, 0x00, 0x25]);
        // Longer than one fold block of 360 words and odd, so folding and the last byte count.
        let mut long: Vec<u8> = (0..2000u32).map(|i| (i * 7 + 3) as u8).collect();
        long.push(9);
        assert_eq!(adler32(&long), 0x27fe_e0cf);
        assert_eq!(fletcher32(&long).to_le_bytes(), [0x6c, 0x19, 0x56, 0xe0]);
    }
}
