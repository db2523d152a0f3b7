//! `blosc`: a Blosc 1 frame from c-blosc (built from source by `blosc-src`).

use std::ffi::{c_int, c_void, CString};

use serde_json::Value;

use super::config::{map, Config};
use super::registry::{Build, Example, Registration, Settings, Short, V2Params, V2};
use super::BytesToBytes;
use crate::error::CodecError;
use crate::metadata::{DataType, NamedConfig};

/// The codec's name in `zarr.json`.
pub(crate) const NAME: &str = "blosc";

const CNAMES: [&str; 6] = ["lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib"];
const SHUFFLES: [&str; 3] = ["noshuffle", "shuffle", "bitshuffle"];
/// c-blosc adds at most this many bytes to its input (its BLOSC_MAX_OVERHEAD).
const OVERHEAD: u64 = blosc_src::BLOSC_MAX_OVERHEAD as u64;

#[derive(Debug)]
pub(crate) struct Blosc {
    cname: &'static str,
    clevel: u8,
    shuffle: usize,
    /// As configured; `None` when absent (allowed with noshuffle).
    typesize: Option<usize>,
    blocksize: usize,
    /// Element size used for shuffling when `typesize` is absent.
    element_size: usize,
}

impl Blosc {
    pub fn from_metadata(meta: &NamedConfig, data_type: DataType) -> Result<Blosc, CodecError> {
        let config = Config::new("blosc", meta, &["cname", "clevel", "shuffle", "typesize", "blocksize"])?;
        let cname = config.string("cname")?.ok_or_else(|| config.error("cname", "required"))?;
        let cname = CNAMES
            .into_iter()
            .find(|c| *c == cname)
            .ok_or_else(|| config.error("cname", format!("\"{cname}\" is not one of {CNAMES:?}")))?;
        config.required("clevel")?;
        let clevel = config.int("clevel", 0..=9)?.expect("required") as u8;
        let shuffle = match config.required("shuffle")? {
            Value::String(s) => SHUFFLES
                .iter()
                .position(|x| x == s)
                .ok_or_else(|| config.error("shuffle", format!("\"{s}\" is not one of {SHUFFLES:?}")))?,
            other => return Err(config.error("shuffle", format!("expected a string, found {other}"))),
        };
        let typesize = config.int("typesize", 1..=255)?.map(|t| t as usize);
        if typesize.is_none() && shuffle != 0 {
            return Err(config.error("typesize", "required unless shuffle is \"noshuffle\""));
        }
        let blocksize = config.int("blocksize", 0..=i64::from(i32::MAX))?.unwrap_or(0) as usize;
        let element_size = data_type.size().clamp(1, 255);
        Ok(Blosc { cname, clevel, shuffle, typesize, blocksize, element_size })
    }
}

fn corrupt(reason: impl Into<String>) -> CodecError {
    CodecError::Corrupt { codec: "blosc", reason: reason.into(), source: None }
}

impl BytesToBytes for Blosc {
    fn encode(&self, decoded: std::borrow::Cow<'_, [u8]>) -> Result<Vec<u8>, CodecError> {
        if decoded.len() > blosc_src::BLOSC_MAX_BUFFERSIZE as usize {
            return Err(CodecError::Encode {
                codec: "blosc",
                reason: format!("{} bytes exceed the Blosc 1 limit", decoded.len()),
                source: None,
            });
        }
        let mut out = vec![0u8; decoded.len() + OVERHEAD as usize];
        let cname = CString::new(self.cname).expect("codec names hold no NUL");
        // SAFETY: `decoded` is valid for reads of `decoded.len()` bytes and `out` for writes of
        // `out.len()` bytes, which is what the call is told; `cname` is a NUL-terminated string that
        // outlives the call. The _ctx variant keeps no global state, so concurrent calls are safe.
        let written = unsafe {
            blosc_src::blosc_compress_ctx(
                c_int::from(self.clevel),
                self.shuffle as c_int,
                self.typesize.unwrap_or(self.element_size),
                decoded.len(),
                decoded.as_ptr().cast::<c_void>(),
                out.as_mut_ptr().cast::<c_void>(),
                out.len(),
                cname.as_ptr(),
                self.blocksize,
                1,
            )
        };
        if written <= 0 {
            return Err(CodecError::Encode {
                codec: "blosc",
                reason: format!("blosc_compress_ctx returned {written}"),
                source: None,
            });
        }
        out.truncate(written as usize);
        Ok(out)
    }

    fn decode(&self, encoded: std::borrow::Cow<'_, [u8]>, max_decoded: u64) -> Result<Vec<u8>, CodecError> {
        if encoded.len() < blosc_src::BLOSC_MIN_HEADER_LENGTH as usize {
            return Err(corrupt(format!("{} bytes cannot hold a Blosc header", encoded.len())));
        }
        let mut nbytes: usize = 0;
        // SAFETY: `encoded` is valid for reads of `encoded.len()` bytes, the length passed; the
        // function only reads the buffer and writes `nbytes`.
        let valid =
            unsafe { blosc_src::blosc_cbuffer_validate(encoded.as_ptr().cast::<c_void>(), encoded.len(), &mut nbytes) };
        if valid != 0 {
            return Err(corrupt("invalid Blosc header or sizes"));
        }
        if nbytes as u64 > max_decoded {
            return Err(CodecError::TooLarge { codec: "blosc", limit: max_decoded });
        }
        let mut out = vec![0u8; nbytes];
        // SAFETY: blosc_cbuffer_validate checked that the header's sizes are consistent with
        // `encoded.len()`, which makes decompression safe to attempt; `out` is valid for writes of
        // `nbytes` bytes, the destination size passed, so c-blosc cannot write past it.
        let got = unsafe {
            blosc_src::blosc_decompress_ctx(
                encoded.as_ptr().cast::<c_void>(),
                out.as_mut_ptr().cast::<c_void>(),
                nbytes,
                1,
            )
        };
        if got < 0 || got as usize != nbytes {
            return Err(corrupt(format!("blosc_decompress_ctx returned {got}, expected {nbytes} bytes")));
        }
        Ok(out)
    }

    fn max_encoded_size(&self, decoded: u64) -> u64 {
        decoded + OVERHEAD
    }

    fn fixed_encoded_size(&self, _decoded: u64) -> Option<u64> {
        None
    }

    fn to_metadata(&self) -> NamedConfig {
        let mut config = map([
            ("cname", self.cname.into()),
            ("clevel", self.clevel.into()),
            ("shuffle", SHUFFLES[self.shuffle].into()),
        ]);
        if let Some(t) = self.typesize {
            config.insert("typesize".into(), t.into());
        }
        config.insert("blocksize".into(), self.blocksize.into());
        NamedConfig::with_configuration("blosc", config)
    }
}

/// `blosc[:CNAME[:CLEVEL[:SHUFFLE]]]`: zstd, level 5 and byte shuffle when not given; the element
/// size is the array's.
const SHORT: Short = Short {
    usage: "[:CNAME[:CLEVEL[:SHUFFLE]]]",
    most: 3,
    build: |s: &Settings<'_>| {
        let configuration = map([
            ("cname", s.text(0, "zstd").into()),
            ("clevel", s.number::<i64>(1, "clevel", 5)?.into()),
            ("shuffle", s.text(2, "shuffle").into()),
            ("typesize", s.data_type.size().into()),
            ("blocksize", 0.into()),
        ]);
        Ok(NamedConfig::with_configuration(NAME, configuration))
    },
};

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::BytesToBytes(|meta, _array, encoded| {
        Ok(Box::new(Blosc::from_metadata(meta, encoded.data_type.clone())?))
    }),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "uint16",
        codecs: r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}]"#,
    }),
    v2: Some(V2 { id: "blosc", compressor: Some(from_v2), filter: None }),
    short: Some(SHORT),
};

/// A v2 `blosc` compressor for an array of `data_type`: numcodecs' numeric shuffle as its name,
/// numcodecs' defaults written out.
fn from_v2(p: &V2Params<'_>, data_type: &DataType) -> Result<NamedConfig, crate::error::PlanError> {
    // `typesize` appears in some writers' configurations; the frame header records the one
    // used, so the data type's size is written instead.
    p.only(&["cname", "clevel", "shuffle", "blocksize", "typesize"])?;
    // Variable-length chunks reach the compressor as an item list, a plain byte buffer, and
    // blosc's typesize stops at 255 (numcodecs passes wider items as bytes too).
    let size = data_type.size().clamp(1, 255);
    let shuffle = match p.get("shuffle") {
        // numcodecs' default: byte shuffle.
        None => "shuffle",
        Some(value) => match value.as_i64() {
            Some(0) => "noshuffle",
            Some(1) => "shuffle",
            Some(2) => "bitshuffle",
            // AUTOSHUFFLE: what numcodecs picks when it encodes.
            Some(-1) if size == 1 => "bitshuffle",
            Some(-1) => "shuffle",
            _ => return Err(p.unsupported("shuffle", value, "expected 0 (none), 1 (byte), 2 (bit) or -1 (automatic)")),
        },
    };
    let mut config = serde_json::Map::new();
    config.insert("cname".into(), p.get("cname").cloned().unwrap_or_else(|| "lz4".into()));
    config.insert("clevel".into(), p.get("clevel").cloned().unwrap_or(Value::from(5)));
    config.insert("shuffle".into(), shuffle.into());
    // c-blosc treats a type wider than 255 bytes as a byte stream (typesize 1).
    config.insert("typesize".into(), (if size > 255 { 1 } else { size }).into());
    config.insert("blocksize".into(), p.get("blocksize").cloned().unwrap_or(Value::from(0)));
    Ok(NamedConfig::with_configuration(NAME, config))
}
