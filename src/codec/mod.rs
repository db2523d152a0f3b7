//! Codecs and the codec chain (spec "Chunk encoding"), one file per codec, each registered in
//! [`registry`], the one list through which every codec name is dispatched.
//!
//! A chain is zero or more array -> array codecs, exactly one array -> bytes codec, and zero or
//! more bytes -> bytes codecs. Decoded chunks are C-order little-endian element bytes: the same
//! layout as zarrdb's raw region API, so the common `bytes`(little) codec is a plain copy.
//!
//! Hostile input: every stage knows an upper bound of its output size (`max_encoded_size`), so a
//! decompressor is never allowed to produce more than the next stage can legitimately consume, and
//! the final decoded chunk must have exactly the expected size.

mod astype;
mod bitround;
mod blosc;
mod bytes;
mod bz2;
mod cast_value;
mod checksum32;
mod config;
mod crc32c;
mod delta;
mod fixedscaleoffset;
mod gzip;
mod lz4;
mod lzma;
pub(crate) mod numcodecs;
mod numpy;
mod packbits;
mod quantize;
pub(crate) mod region;
pub(crate) mod registry;
mod scale_offset;
mod sharding;
mod short;
mod shuffle;
mod transpose;
mod typed;
mod unavailable;
pub(crate) mod v2;
pub(crate) mod vlen;
mod zlib;
mod zstd;

use std::borrow::Cow;
use std::cell::Cell;

use crate::error::{CodecError, Error};
use crate::metadata::{DataType, FillValue, NamedConfig};
use crate::store::ByteRange;

thread_local! {
    /// The buffers of `CodecChain::decode_with`. Taken out while in use, so a nested decode (an
    /// inner chain that shards again) finds them empty and allocates its own.
    static SCRATCH: Cell<[Vec<u8>; 2]> = const { Cell::new([Vec::new(), Vec::new()]) };
}

/// Larger scratch buffers (from unusually large inner chunks) are freed instead of kept per thread.
const MAX_KEPT_SCRATCH: usize = 4 << 20;

/// What a codec receives or produces when it works on arrays.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ChunkSpec {
    pub shape: Vec<u64>,
    pub data_type: DataType,
    pub fill_value: FillValue,
}

/// The largest decoded chunk (or shard) zarrdb holds in memory, 4 GiB: encoding and decoding
/// work on whole chunks, and the size comes from metadata, which may declare chunks of up to 2^40
/// elements. Larger chunks are refused with `CodecError::ChunkTooLarge` instead of allocated.
pub const MAX_CHUNK_BYTES: u64 = 1 << 32;

/// `ChunkTooLarge` for a chunk of `spec` above [`MAX_CHUNK_BYTES`].
pub(crate) fn check_chunk_size(spec: &ChunkSpec) -> Result<(), CodecError> {
    let bytes = spec.num_bytes();
    if bytes > MAX_CHUNK_BYTES {
        return Err(CodecError::ChunkTooLarge { bytes, limit: MAX_CHUNK_BYTES });
    }
    Ok(())
}

impl ChunkSpec {
    pub fn num_elements(&self) -> u64 {
        self.shape.iter().fold(1u64, |n, &d| n.saturating_mul(d))
    }

    /// The decoded size in bytes; 0 for variable-length types, whose decoded chunks are item
    /// lists of no fixed size (see [`vlen`]).
    pub fn num_bytes(&self) -> u64 {
        // Saturating: metadata may declare chunks of up to 2^40 elements of wide records; such a
        // size is refused before anything is allocated (`MAX_CHUNK_BYTES`), never wrapped.
        self.num_elements().saturating_mul(self.data_type.size() as u64)
    }

    /// The decoded size every chunk must have, `None` for variable-length types.
    pub fn expected_bytes(&self) -> Option<u64> {
        (!self.data_type.is_variable_length()).then(|| self.num_bytes())
    }
}

/// Array -> array (e.g. transpose).
pub(crate) trait ArrayToArray: Send + Sync + std::fmt::Debug {
    fn encoded_spec(&self, decoded: &ChunkSpec) -> ChunkSpec;
    fn encode(&self, decoded: Cow<'_, [u8]>, decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError>;
    fn decode(&self, encoded: Vec<u8>, decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError>;
    fn to_metadata(&self) -> NamedConfig;
}

/// Array -> bytes (exactly one per chain).
pub(crate) trait ArrayToBytes: Send + Sync + std::fmt::Debug {
    /// The input is borrowed when the caller keeps it (e.g. `Array::encode_chunk`), so
    /// compressors read it in place.
    /// An identity encoding (little-endian `bytes`) hands the input back without copying it.
    fn encode<'a>(&self, decoded: Cow<'a, [u8]>, spec: &ChunkSpec) -> Result<Cow<'a, [u8]>, CodecError>;
    /// Must return exactly `spec.num_bytes()` bytes or an error. The input is borrowed where the
    /// caller holds it inside a larger value (inner chunks of a shard), so no copy is made to decode.
    fn decode(&self, encoded: Cow<'_, [u8]>, spec: &ChunkSpec) -> Result<Vec<u8>, CodecError>;
    /// Decode in place, for codecs that only check the size and reorder bytes within elements
    /// (`bytes`); `None` for codecs that build a new buffer, which must be decoded with `decode`.
    fn decode_in_place(&self, _data: &mut [u8], _spec: &ChunkSpec) -> Option<Result<(), CodecError>> {
        None
    }
    /// Whether the encoded bytes of a chunk of `spec` are its decoded bytes as they are (the
    /// little-endian `bytes` codec), so a reader may use them without decoding.
    fn decodes_as_is(&self, _spec: &ChunkSpec) -> bool {
        false
    }
    /// Decode a chunk of `spec` straight into the box of `dst` (a C-order buffer of
    /// `dst_box.shape` elements) that starts at `dst_box.start` and has the chunk's shape, with
    /// no whole decoded chunk in between; `Ok(false)`, leaving `dst` untouched, for codecs that
    /// do not (the caller then decodes and copies). On an error the box may hold part of the
    /// chunk.
    fn decode_into_box(
        &self,
        _encoded: &[u8],
        _spec: &ChunkSpec,
        _dst: &mut [u8],
        _dst_box: &region::BoxIn<'_>,
    ) -> Result<bool, CodecError> {
        Ok(false)
    }
    /// The largest encoded size any valid chunk of `spec` can have.
    fn max_encoded_size(&self, spec: &ChunkSpec) -> u64;
    /// The encoded size when it does not depend on the values (needed for shard indexes).
    fn fixed_encoded_size(&self, spec: &ChunkSpec) -> Option<u64>;
    fn to_metadata(&self) -> NamedConfig;
    /// Whether `partial_decode` can do better than a whole read.
    fn supports_partial_decode(&self) -> bool {
        false
    }
    /// Decode only the box `offset..offset+shape` of the chunk, fetching byte ranges of the stored
    /// value (`value_len` bytes long) through `fetch`; `None` when the value is absent. Codecs that cannot do better than
    /// a whole read return `Ok(Partial::Unsupported)`.
    fn partial_decode(
        &self,
        _fetch: &mut Fetch<'_>,
        _key: &str,
        _value_len: u64,
        _spec: &ChunkSpec,
        _offset: &[u64],
        _shape: &[u64],
    ) -> Result<Partial, Error> {
        Ok(Partial::Unsupported)
    }
}

/// Fetches byte ranges of one stored value: one result per range, `None` when the value is absent.
pub(crate) type Fetch<'a> = dyn FnMut(&[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, Error> + 'a;

/// The outcome of a partial decode.
pub(crate) enum Partial {
    /// The codec cannot read part of a value; read it whole.
    Unsupported,
    /// The value is absent.
    Absent,
    /// The box's elements, C order.
    Data(Vec<u8>),
}

/// Bytes -> bytes (compressors, checksums).
pub(crate) trait BytesToBytes: Send + Sync + std::fmt::Debug {
    fn encode(&self, decoded: Cow<'_, [u8]>) -> Result<Vec<u8>, CodecError>;
    /// `encode`, appending the result to `out`; codecs that can write into an existing buffer
    /// override it, so the inner chunks of a shard are encoded straight into the shard.
    fn encode_append(&self, decoded: &[u8], out: &mut Vec<u8>) -> Result<(), CodecError> {
        out.extend_from_slice(&self.encode(Cow::Borrowed(decoded))?);
        Ok(())
    }
    /// Decode; producing more than `max_decoded` bytes is an error, never an allocation.
    fn decode(&self, encoded: Cow<'_, [u8]>, max_decoded: u64) -> Result<Vec<u8>, CodecError>;
    /// `decode` into `out`, replacing its contents; codecs that can write into an existing buffer
    /// override it, so decoding many small chunks reuses one allocation.
    fn decode_into(&self, encoded: &[u8], max_decoded: u64, out: &mut Vec<u8>) -> Result<(), CodecError> {
        *out = self.decode(Cow::Borrowed(encoded), max_decoded)?;
        Ok(())
    }
    fn max_encoded_size(&self, decoded: u64) -> u64;
    fn fixed_encoded_size(&self, decoded: u64) -> Option<u64>;
    fn to_metadata(&self) -> NamedConfig;
}

/// The parsed, validated codec list of an array (or of a shard's inner chunks or index).
#[derive(Debug)]
pub(crate) struct CodecChain {
    array_to_array: Vec<Box<dyn ArrayToArray>>,
    array_to_bytes: Box<dyn ArrayToBytes>,
    bytes_to_bytes: Vec<Box<dyn BytesToBytes>>,
    /// The decoded spec each stage receives: specs[0] is the chunk, specs[i+1] the output of
    /// array->array codec i; the last is what the array->bytes codec sees.
    specs: Vec<ChunkSpec>,
    /// Upper bounds of the byte sizes between bytes stages: `[a2b output, after b2b 0, ...]`;
    /// fixed by the chain, so computed once.
    bounds: Vec<u64>,
    /// The first codec of the chain that zarrdb knows but cannot run: every encode and decode
    /// fails naming it, before any other stage could fail on bytes it cannot make sense of.
    unavailable: Option<String>,
}

impl CodecChain {
    /// Build the chain from `codecs` for chunks of `spec`, refusing unknown names and invalid
    /// chains before any data is written.
    pub fn from_metadata(codecs: &[NamedConfig], spec: &ChunkSpec) -> Result<CodecChain, CodecError> {
        let mut array_to_array: Vec<Box<dyn ArrayToArray>> = Vec::new();
        let mut array_to_bytes: Option<Box<dyn ArrayToBytes>> = None;
        let mut bytes_to_bytes: Vec<Box<dyn BytesToBytes>> = Vec::new();
        let mut unavailable: Option<String> = None;
        let mut specs = vec![spec.clone()];
        let order_error = |name: &str, kind: &str| CodecError::InvalidChain {
            reason: format!("{kind} codec \"{name}\" cannot follow the array -> bytes codec"),
        };
        let before_error = |name: &str| CodecError::InvalidChain {
            reason: format!("bytes -> bytes codec \"{name}\" comes before the array -> bytes codec"),
        };
        let second_error = || CodecError::InvalidChain { reason: "more than one array -> bytes codec".into() };
        for codec in codecs {
            let current = specs.last().expect("specs starts non-empty").clone();
            let registration =
                registry::find(&codec.name).ok_or_else(|| CodecError::UnknownCodec { name: codec.name.clone() })?;
            if current.data_type.is_variable_length() && array_to_bytes.is_none() && registration.fixed_size_only {
                // Array -> array codecs and sharding move fixed-size elements; items of a
                // variable-length type reach the bytes stage only through their vlen codec.
                return Err(CodecError::InvalidChain {
                    reason: format!(
                        "codec \"{}\" cannot take the variable-length data type {}",
                        codec.name, current.data_type
                    ),
                });
            }
            match (registration.build, array_to_bytes.is_some()) {
                (registry::Build::ArrayToArray(build), false) => {
                    let t = build(codec, &current)?;
                    specs.push(t.encoded_spec(&current));
                    array_to_array.push(t);
                }
                (registry::Build::ArrayToBytes(build), false) => array_to_bytes = Some(build(codec, &current)?),
                (registry::Build::BytesToBytes(build), true) => bytes_to_bytes.push(build(codec, &specs[0], &current)?),
                (registry::Build::Unavailable(kind), false) if kind != registry::Kind::BytesToBytes => {
                    unavailable.get_or_insert_with(|| codec.name.clone());
                    let stand_in = unavailable::Unavailable::new(codec);
                    if kind == registry::Kind::ArrayToArray {
                        array_to_array.push(Box::new(stand_in));
                    } else {
                        array_to_bytes = Some(Box::new(stand_in));
                    }
                }
                (registry::Build::Unavailable(registry::Kind::BytesToBytes), true) => {
                    unavailable.get_or_insert_with(|| codec.name.clone());
                    bytes_to_bytes.push(Box::new(unavailable::Unavailable::new(codec)));
                }
                (build, _) => {
                    return Err(match build.kind() {
                        registry::Kind::ArrayToArray => order_error(&codec.name, "array -> array"),
                        registry::Kind::ArrayToBytes => second_error(),
                        registry::Kind::BytesToBytes => before_error(&codec.name),
                    })
                }
            }
        }
        let array_to_bytes =
            array_to_bytes.ok_or_else(|| CodecError::InvalidChain { reason: "no array -> bytes codec".into() })?;
        let mut bounds = vec![array_to_bytes.max_encoded_size(specs.last().expect("specs is never empty"))];
        for codec in &bytes_to_bytes {
            let last = *bounds.last().expect("non-empty");
            bounds.push(codec.max_encoded_size(last));
        }
        Ok(CodecChain { array_to_array, array_to_bytes, bytes_to_bytes, specs, bounds, unavailable })
    }

    /// `Unavailable` when the chain holds a codec zarrdb cannot run; `ChunkTooLarge` when a
    /// decoded chunk would exceed [`MAX_CHUNK_BYTES`], before any buffer of that size exists.
    pub(crate) fn check_runnable(&self) -> Result<(), CodecError> {
        if let Some(name) = &self.unavailable {
            return Err(CodecError::Unavailable { name: name.clone() });
        }
        check_chunk_size(&self.specs[0])
    }

    fn bytes_spec(&self) -> &ChunkSpec {
        self.specs.last().expect("specs is never empty")
    }

    /// The encoded size of every chunk when it does not depend on the values.
    pub fn fixed_encoded_size(&self) -> Option<u64> {
        let mut size = self.array_to_bytes.fixed_encoded_size(self.bytes_spec())?;
        for codec in &self.bytes_to_bytes {
            size = codec.fixed_encoded_size(size)?;
        }
        Some(size)
    }

    /// The largest encoded size of any chunk.
    pub fn max_encoded_size(&self) -> u64 {
        *self.bounds.last().expect("non-empty")
    }

    /// Encode one decoded chunk (C-order little-endian element bytes).
    pub fn encode<'a>(&self, decoded: impl Into<Cow<'a, [u8]>>) -> Result<Vec<u8>, CodecError> {
        self.check_runnable()?;
        let mut data: Cow<'a, [u8]> = decoded.into();
        debug_assert!(self.specs[0].expected_bytes().is_none_or(|n| n == data.len() as u64));
        for (codec, spec) in self.array_to_array.iter().zip(&self.specs) {
            data = Cow::Owned(codec.encode(data, spec)?);
        }
        let mut bytes = self.array_to_bytes.encode(data, self.bytes_spec())?;
        for codec in &self.bytes_to_bytes {
            bytes = Cow::Owned(codec.encode(bytes)?);
        }
        Ok(bytes.into_owned())
    }

    /// `encode`, appending the encoded chunk to `out` instead of returning a new buffer. When the
    /// last codec can write into `out` (zstd), the encoded bytes are never copied.
    pub fn encode_append(&self, decoded: &[u8], out: &mut Vec<u8>) -> Result<(), CodecError> {
        self.check_runnable()?;
        let Some((last, rest)) = self.bytes_to_bytes.split_last() else {
            out.extend_from_slice(&self.encode(decoded)?);
            return Ok(());
        };
        let mut data: Cow<'_, [u8]> = Cow::Borrowed(decoded);
        for (codec, spec) in self.array_to_array.iter().zip(&self.specs) {
            data = Cow::Owned(codec.encode(data, spec)?);
        }
        let mut bytes = self.array_to_bytes.encode(data, self.bytes_spec())?;
        for codec in rest {
            bytes = Cow::Owned(codec.encode(bytes)?);
        }
        last.encode_append(&bytes, out)
    }

    /// Decode one stored chunk; the result has exactly the chunk's size.
    pub fn decode<'a>(&self, encoded: impl Into<Cow<'a, [u8]>>) -> Result<Vec<u8>, CodecError> {
        self.check_runnable()?;
        let mut bytes: Cow<'a, [u8]> = encoded.into();
        for (i, codec) in self.bytes_to_bytes.iter().enumerate().rev() {
            bytes = Cow::Owned(codec.decode(bytes, self.bounds[i])?);
        }
        let mut data = self.array_to_bytes.decode(bytes, self.bytes_spec())?;
        for (codec, spec) in self.array_to_array.iter().zip(&self.specs).rev() {
            data = codec.decode(data, spec)?;
        }
        if let Some(expected) = self.specs[0].expected_bytes() {
            if data.len() as u64 != expected {
                return Err(CodecError::SizeMismatch { codec: "chain", expected, actual: data.len() as u64 });
            }
        }
        Ok(data)
    }

    /// Whether a chunk is stored as its decoded bytes (little-endian `bytes` alone): encoding
    /// hands an owned buffer back as it is, and decoding only checks the size.
    pub fn stores_as_decoded(&self) -> bool {
        self.array_to_array.is_empty()
            && self.bytes_to_bytes.is_empty()
            && self.array_to_bytes.decodes_as_is(self.bytes_spec())
    }

    /// Decode one stored chunk straight into a box of `dst`, as [`ArrayToBytes::decode_into_box`]
    /// says; `Ok(false)`, leaving `dst` untouched, when the chain cannot (then use
    /// [`CodecChain::decode_with`]).
    pub fn decode_into_box(
        &self,
        encoded: &[u8],
        dst: &mut [u8],
        dst_box: &region::BoxIn<'_>,
    ) -> Result<bool, CodecError> {
        self.check_runnable()?;
        if !self.array_to_array.is_empty() || !self.bytes_to_bytes.is_empty() {
            return Ok(false);
        }
        self.array_to_bytes.decode_into_box(encoded, self.bytes_spec(), dst, dst_box)
    }

    /// Decode one stored chunk and pass the decoded bytes to `consume`. Intermediate and decoded
    /// bytes live in per-thread buffers that stay allocated and cache-warm between calls, so
    /// decoding the many small inner chunks of a shard allocates nothing per chunk.
    pub fn decode_with<R>(&self, encoded: &[u8], consume: impl FnOnce(&[u8]) -> R) -> Result<R, CodecError> {
        self.check_runnable()?;
        if self.stores_as_decoded() {
            // Stored as they are decoded: nothing to decode or copy, only the size to check.
            // The size check `bytes` makes when it decodes, with the same error.
            let expected = self.bytes_spec().num_bytes();
            if encoded.len() as u64 != expected {
                return Err(CodecError::SizeMismatch { codec: "bytes", expected, actual: encoded.len() as u64 });
            }
            return Ok(consume(encoded));
        }
        if !self.array_to_array.is_empty() || self.bytes_to_bytes.is_empty() {
            return self.decode(encoded).map(|data| consume(&data));
        }
        let mut bufs = SCRATCH.take();
        let result = self.decode_scratch(encoded, &mut bufs).map(consume);
        for buf in &mut bufs {
            if buf.capacity() > MAX_KEPT_SCRATCH {
                *buf = Vec::new();
            }
        }
        SCRATCH.set(bufs);
        result
    }

    /// The body of `decode_with` for chains without array -> array codecs and with at least one
    /// bytes -> bytes codec: the stages alternate between the two buffers of `bufs`.
    fn decode_scratch<'s>(&self, encoded: &[u8], bufs: &'s mut [Vec<u8>; 2]) -> Result<&'s [u8], CodecError> {
        let mut current: Option<usize> = None;
        for (i, codec) in self.bytes_to_bytes.iter().enumerate().rev() {
            let out = current.map_or(0, |c| 1 - c);
            let [first, second] = &mut *bufs;
            let (dst, other) = if out == 0 { (first, &*second) } else { (second, &*first) };
            let src: &[u8] = if current.is_some() { other } else { encoded };
            codec.decode_into(src, self.bounds[i], dst)?;
            current = Some(out);
        }
        let data = &mut bufs[current.expect("at least one bytes -> bytes codec")];
        self.finish_decode(data)?;
        Ok(data)
    }

    /// Decode one stored chunk into `out`, replacing its contents. With one bytes -> bytes codec
    /// and no array -> array codec (e.g. `bytes` + `zstd`), the codec writes straight into `out`,
    /// so a caller that keeps several decoded chunks at once reuses their buffers.
    pub fn decode_into(&self, encoded: &[u8], out: &mut Vec<u8>) -> Result<(), CodecError> {
        self.check_runnable()?;
        match (self.array_to_array.is_empty(), self.bytes_to_bytes.as_slice()) {
            (true, [only]) => {
                only.decode_into(encoded, self.bounds[0], out)?;
                self.finish_decode(out)
            }
            _ => self.decode_with(encoded, |data| {
                out.clear();
                out.extend_from_slice(data);
            }),
        }
    }

    /// The array -> bytes decoding of `data`, the output of the bytes -> bytes codecs, in place
    /// where the codec allows, then the decoded size check.
    fn finish_decode(&self, data: &mut Vec<u8>) -> Result<(), CodecError> {
        match self.array_to_bytes.decode_in_place(data, self.bytes_spec()) {
            Some(result) => result?,
            None => *data = self.array_to_bytes.decode(Cow::Borrowed(data.as_slice()), self.bytes_spec())?,
        }
        if let Some(expected) = self.specs[0].expected_bytes() {
            if data.len() as u64 != expected {
                return Err(CodecError::SizeMismatch { codec: "chain", expected, actual: data.len() as u64 });
            }
        }
        Ok(())
    }

    /// Whether reading part of a chunk can fetch less than the whole value (a lone sharding codec).
    pub fn supports_partial_decode(&self) -> bool {
        self.unavailable.is_none()
            && self.array_to_array.is_empty()
            && self.bytes_to_bytes.is_empty()
            && self.array_to_bytes.supports_partial_decode()
    }

    /// Decode the box `offset..offset+shape` of a stored chunk, fetching only the bytes needed
    /// where the chain allows (a lone sharding codec); `Unsupported` otherwise.
    pub fn partial_decode(
        &self,
        fetch: &mut Fetch<'_>,
        key: &str,
        value_len: u64,
        offset: &[u64],
        shape: &[u64],
    ) -> Result<Partial, Error> {
        if !self.supports_partial_decode() {
            return Ok(Partial::Unsupported);
        }
        self.array_to_bytes.partial_decode(fetch, key, value_len, self.bytes_spec(), offset, shape)
    }

    /// The chain as metadata, in canonical form (e.g. the short form `"bytes"` becomes an object).
    pub fn to_metadata(&self) -> Vec<NamedConfig> {
        let mut out: Vec<NamedConfig> = self.array_to_array.iter().map(|c| c.to_metadata()).collect();
        out.push(self.array_to_bytes.to_metadata());
        out.extend(self.bytes_to_bytes.iter().map(|c| c.to_metadata()));
        out
    }
}
