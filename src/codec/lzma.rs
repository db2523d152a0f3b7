//! `numcodecs.lzma`: Python's `lzma.compress(data, format, check, preset, filters)`. Supported:
//! - format 1 (xz, numcodecs' default) with any check and preset;
//! - format 2 (the legacy `.lzma` "alone" format) with a preset;
//! - format 3 (raw) with a `filters` chain: LZMA1 or LZMA2 last (options `preset`, `dict_size`,
//!   `lc`, `lp`, `pb`), optionally after delta (`dist`) and branch filters.
//!
//! Refused, naming the field: format 0 (auto), which Python cannot compress with; `filters` with
//! xz or alone, which numcodecs cannot decode (Python refuses filters for those formats when
//! decompressing); filter options that only tune the encoder's search. Decoding reads
//! concatenated streams and ignores trailing data after the first, as `lzma.decompress` does.

use std::borrow::Cow;

use liblzma::stream::{Action, Check, Filters, LzmaOptions, Status, Stream, PRESET_EXTREME};
use serde_json::{Map, Value};

use super::config::Config;
use super::registry::{Build, Example, Registration, V2};
use super::BytesToBytes;
use crate::error::CodecError;
use crate::metadata::NamedConfig;

pub(crate) const NAME: &str = "numcodecs.lzma";

/// The decoder's memory limit: the largest dictionary of any preset (64 MiB at level 9) fits, a
/// header that claims a larger one is refused instead of allocated.
const MEMLIMIT: u64 = 128 << 20;

const FILTER_LZMA1: u64 = 0x4000_0000_0000_0001;
const FILTER_LZMA2: u64 = 0x21;
const FILTER_DELTA: u64 = 0x03;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Format {
    Xz,
    Alone,
    Raw,
}

#[derive(Debug)]
enum Filter {
    Lzma {
        lzma2: bool,
        preset: u32,
        dict_size: Option<u32>,
        lc: Option<u32>,
        lp: Option<u32>,
        pb: Option<u32>,
    },
    Delta {
        dist: u32,
    },
    /// A branch/call/jump filter: x86 (4), PowerPC (5), IA-64 (6), ARM (7), ARM-Thumb (8), SPARC (9).
    Bcj(u64),
}

#[derive(Debug)]
pub(crate) struct Lzma {
    format: Format,
    check: i64,
    preset: Option<u32>,
    filters: Vec<Filter>,
    /// The configuration as written, given back by `to_metadata`.
    config: Map<String, Value>,
}

fn preset(config: &Config<'_>, field: &str, value: &Value) -> Result<u32, CodecError> {
    match value.as_u64() {
        Some(p) if p & !u64::from(PRESET_EXTREME) <= 9 => Ok(p as u32),
        _ => Err(config.error(field, format!("expected 0..=9, optionally | {PRESET_EXTREME:#x}, found {value}"))),
    }
}

fn parse_filter(config: &Config<'_>, i: usize, value: &Value) -> Result<Filter, CodecError> {
    let field = |member: &str| format!("filters[{i}].{member}");
    let Some(obj) = value.as_object() else {
        return Err(config.error(&format!("filters[{i}]"), format!("expected an object, found {value}")));
    };
    let id =
        obj.get("id").and_then(Value::as_u64).ok_or_else(|| config.error(&field("id"), "a filter id is required"))?;
    let allowed: &[&str] = match id {
        FILTER_LZMA1 | FILTER_LZMA2 => &["id", "preset", "dict_size", "lc", "lp", "pb"],
        FILTER_DELTA => &["id", "dist"],
        4..=9 => &["id"],
        other => return Err(config.error(&field("id"), format!("filter {other:#x} is not supported"))),
    };
    if let Some(extra) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(config.error(&field(extra), "not an option zarrdb supports for this filter"));
    }
    let small = |member: &str, max: u64| -> Result<Option<u32>, CodecError> {
        match obj.get(member) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) if n <= max => Ok(Some(n as u32)),
                _ => Err(config.error(&field(member), format!("expected an integer in 0..={max}, found {v}"))),
            },
        }
    };
    if id == FILTER_LZMA2 && small("lc", 4)?.unwrap_or(3) + small("lp", 4)?.unwrap_or(0) > 4 {
        return Err(config.error(&field("lc"), "LZMA2 needs lc + lp <= 4"));
    }
    Ok(match id {
        FILTER_DELTA => Filter::Delta { dist: small("dist", 256)?.unwrap_or(1).max(1) },
        FILTER_LZMA1 | FILTER_LZMA2 => Filter::Lzma {
            lzma2: id == FILTER_LZMA2,
            preset: match obj.get("preset") {
                None => 6,
                Some(v) => preset(config, &field("preset"), v)?,
            },
            dict_size: small("dict_size", 1536 << 20)?,
            lc: small("lc", 4)?,
            lp: small("lp", 4)?,
            pb: small("pb", 4)?,
        },
        other => Filter::Bcj(other),
    })
}

impl Lzma {
    pub fn from_metadata(meta: &NamedConfig) -> Result<Lzma, CodecError> {
        let config = Config::new(NAME, meta, &["format", "check", "preset", "filters"])?;
        let format = match config.int("format", 0..=3)?.unwrap_or(1) {
            1 => Format::Xz,
            2 => Format::Alone,
            3 => Format::Raw,
            _ => {
                return Err(
                    config.error("format", "0 (auto) is for reading only; Python's lzma cannot compress with it")
                )
            }
        };
        let check = config.int("check", -1..=10)?.unwrap_or(-1);
        match (format, check) {
            (_, -1) | (_, 0) | (Format::Xz, 1 | 4 | 10) => {}
            (Format::Xz, _) => return Err(config.error("check", "expected -1, 0, 1 (crc32), 4 (crc64) or 10 (sha256)")),
            _ => return Err(config.error("check", "integrity checks exist in the xz format only")),
        }
        let preset = match config.get("preset") {
            None | Some(Value::Null) => None,
            Some(v) => Some(preset(&config, "preset", v)?),
        };
        let filters = match config.get("filters") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) => {
                list.iter().enumerate().map(|(i, v)| parse_filter(&config, i, v)).collect::<Result<_, _>>()?
            }
            Some(other) => return Err(config.error("filters", format!("expected a list or null, found {other}"))),
        };
        if preset.is_some() && !filters.is_empty() {
            return Err(config.error("preset", "cannot be given with a filter chain (Python refuses both)"));
        }
        if format == Format::Raw {
            if !matches!(filters.last(), Some(Filter::Lzma { .. })) {
                return Err(config.error("filters", "the raw format needs a chain ending in LZMA1 or LZMA2"));
            }
            if filters[..filters.len() - 1].iter().any(|f| matches!(f, Filter::Lzma { .. })) {
                return Err(config.error("filters", "LZMA1 and LZMA2 may only be the last filter"));
            }
        } else if !filters.is_empty() {
            return Err(config.error("filters", "numcodecs can only decode a filter chain with format 3 (raw)"));
        }
        let config_map = meta.configuration.clone().unwrap_or_default();
        Ok(Lzma { format, check, preset, filters, config: config_map })
    }

    /// The raw filter chain. `decode_limit`: when decoding at most that many bytes, the
    /// dictionary is sized to it: a raw stream has no header, the decoder allocates the
    /// dictionary the configuration names (up to 1.5 GiB), and no valid match reaches further
    /// back than the output so far, so a dictionary of the output's size decodes the same.
    fn filter_chain(&self, decode_limit: Option<u64>) -> Result<Filters, liblzma::stream::Error> {
        let mut chain = Filters::new();
        for filter in &self.filters {
            match *filter {
                Filter::Lzma { lzma2, preset, dict_size, lc, lp, pb } => {
                    let mut opts = LzmaOptions::new_preset(preset)?;
                    let dict_size = match decode_limit {
                        Some(limit) => Some(limit.clamp(4096, 1536 << 20) as u32),
                        None => dict_size,
                    };
                    dict_size.map(|v| opts.dict_size(v));
                    lc.map(|v| opts.literal_context_bits(v));
                    lp.map(|v| opts.literal_position_bits(v));
                    pb.map(|v| opts.position_bits(v));
                    if lzma2 {
                        chain.lzma2(&opts);
                    } else {
                        chain.lzma1(&opts);
                    }
                }
                // The property byte is the distance minus one.
                Filter::Delta { dist } => {
                    chain.delta_properties(&[(dist - 1) as u8])?;
                }
                Filter::Bcj(id) => {
                    match id {
                        4 => chain.x86(),
                        5 => chain.powerpc(),
                        6 => chain.ia64(),
                        7 => chain.arm(),
                        8 => chain.arm_thumb(),
                        _ => chain.sparc(),
                    };
                }
            }
        }
        Ok(chain)
    }

    fn encoder(&self) -> Result<Stream, liblzma::stream::Error> {
        let preset = self.preset.unwrap_or(6);
        match self.format {
            Format::Xz => {
                let check = match self.check {
                    0 => Check::None,
                    1 => Check::Crc32,
                    10 => Check::Sha256,
                    _ => Check::Crc64,
                };
                Stream::new_easy_encoder(preset, check)
            }
            Format::Alone => Stream::new_lzma_encoder(&LzmaOptions::new_preset(preset)?),
            Format::Raw => Stream::new_raw_encoder(&self.filter_chain(None)?),
        }
    }

    fn decoder(&self, max_decoded: u64) -> Result<Stream, liblzma::stream::Error> {
        match self.format {
            Format::Xz => Stream::new_stream_decoder(MEMLIMIT, 0),
            Format::Alone => Stream::new_lzma_decoder(MEMLIMIT),
            Format::Raw => Stream::new_raw_decoder(&self.filter_chain(Some(max_decoded))?),
        }
    }

    /// Decode one stream from the start of `input` into `out`, never holding more than
    /// `max_decoded` bytes; returns the input bytes the stream took.
    fn decode_stream(&self, input: &[u8], out: &mut Vec<u8>, max_decoded: u64) -> Result<usize, CodecError> {
        let corrupt = |reason: String| CodecError::Corrupt { codec: NAME, reason, source: None };
        let mut stream = self.decoder(max_decoded).map_err(|e| corrupt(format!("cannot start the decoder: {e:?}")))?;
        let mut buf = vec![0u8; 64 << 10];
        let mut pos = 0usize;
        loop {
            let (in_before, out_before) = (stream.total_in(), stream.total_out());
            let status = stream.process(&input[pos..], &mut buf, Action::Run).map_err(|e| corrupt(format!("{e:?}")))?;
            let consumed = (stream.total_in() - in_before) as usize;
            let produced = (stream.total_out() - out_before) as usize;
            pos += consumed;
            if out.len() as u64 + produced as u64 > max_decoded {
                return Err(CodecError::TooLarge { codec: NAME, limit: max_decoded });
            }
            out.extend_from_slice(&buf[..produced]);
            if status == Status::StreamEnd {
                return Ok(pos);
            }
            if consumed == 0 && produced == 0 {
                return Err(corrupt("the stream ends before its end marker".into()));
            }
        }
    }
}

impl BytesToBytes for Lzma {
    fn encode(&self, decoded: Cow<'_, [u8]>) -> Result<Vec<u8>, CodecError> {
        let encode_error =
            |e: liblzma::stream::Error| CodecError::Encode { codec: NAME, reason: format!("{e:?}"), source: None };
        let mut stream = self.encoder().map_err(encode_error)?;
        let mut out = Vec::with_capacity(decoded.len() / 2 + 128);
        loop {
            let consumed = stream.total_in() as usize;
            if out.len() == out.capacity() {
                out.reserve(out.capacity().max(4096));
            }
            if stream.process_vec(&decoded[consumed..], &mut out, Action::Finish).map_err(encode_error)?
                == Status::StreamEnd
            {
                return Ok(out);
            }
        }
    }

    fn decode(&self, encoded: Cow<'_, [u8]>, max_decoded: u64) -> Result<Vec<u8>, CodecError> {
        let mut out = Vec::new();
        let mut pos = self.decode_stream(&encoded, &mut out, max_decoded)?;
        // Python decodes further streams while data remains, and ignores data that is not one.
        while pos < encoded.len() {
            let before = out.len();
            match self.decode_stream(&encoded[pos..], &mut out, max_decoded) {
                Ok(used) => pos += used,
                Err(e @ CodecError::TooLarge { .. }) => return Err(e),
                Err(_) => {
                    out.truncate(before);
                    break;
                }
            }
        }
        Ok(out)
    }

    fn max_encoded_size(&self, decoded: u64) -> u64 {
        // LZMA2 stores incompressible data in chunks with 3 bytes of header per 64 KiB; LZMA1
        // (alone, raw) can expand by a little more; xz adds headers, index and check.
        decoded + decoded / 32 + 1024
    }

    fn fixed_encoded_size(&self, _decoded: u64) -> Option<u64> {
        None
    }

    fn to_metadata(&self) -> NamedConfig {
        NamedConfig::with_configuration(NAME, self.config.clone())
    }
}

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::BytesToBytes(|meta, _array, _encoded| Ok(Box::new(Lzma::from_metadata(meta)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "int64",
        codecs: r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.lzma", "configuration": {"preset": 1}}]"#,
    }),
    v2: Some(V2 {
        id: "lzma",
        compressor: Some(|p, _| p.kept(NAME, &["format", "check", "preset", "filters"])),
        filter: None,
    }),
    short: None,
};
