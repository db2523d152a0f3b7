//! The one list of the codecs zarrdb knows. Each codec's module holds everything about it (its
//! names, its configuration, its canonical JSON, its encoder and decoder, its bounds, whether this
//! build runs it) and hands it over as one [`Registration`]; [`REGISTRY`] lists them, and every
//! dispatch on a codec name (`CodecChain::from_metadata`, the v2 import's compressors) goes
//! through [`find`]. Adding a codec is its module and one line here (docs/architecture.md, "Adding
//! a codec").

pub(crate) use super::short::{Settings, Short};
pub(crate) use super::v2::{Filter as V2Filter, Params as V2Params, V2};
use super::zstd;
use super::{astype, bitround, blosc, bytes, bz2, cast_value, checksum32, crc32c, delta, fixedscaleoffset, gzip};
use super::{lz4, lzma, packbits, quantize, scale_offset, sharding, shuffle, transpose, unavailable, vlen, zlib};
use super::{ArrayToArray, ArrayToBytes, BytesToBytes, ChunkSpec};
use crate::error::CodecError;
use crate::metadata::NamedConfig;

/// Where a codec sits in a chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    ArrayToArray,
    ArrayToBytes,
    BytesToBytes,
}

/// Builds an array -> array codec from its metadata, for chunks of the given decoded spec.
pub(crate) type BuildArrayToArray = fn(&NamedConfig, &ChunkSpec) -> Result<Box<dyn ArrayToArray>, CodecError>;

/// Builds the array -> bytes codec from its metadata, for chunks of the given decoded spec.
pub(crate) type BuildArrayToBytes = fn(&NamedConfig, &ChunkSpec) -> Result<Box<dyn ArrayToBytes>, CodecError>;

/// Builds a bytes -> bytes codec from its metadata. It is given the array's chunk spec and the
/// spec the array -> bytes codec receives (they differ after a type-changing filter): `blosc`
/// records the element size of the bytes it compresses, numcodecs' `shuffle` the array's.
pub(crate) type BuildBytesToBytes =
    fn(&NamedConfig, &ChunkSpec, &ChunkSpec) -> Result<Box<dyn BytesToBytes>, CodecError>;

/// How a codec is built, which also says where it sits in a chain.
#[derive(Clone, Copy)]
pub(crate) enum Build {
    ArrayToArray(BuildArrayToArray),
    ArrayToBytes(BuildArrayToBytes),
    BytesToBytes(BuildBytesToBytes),
    /// A codec zarrdb knows but this build cannot run: an array using it still opens, imports and
    /// exports (its chunks copied byte for byte), and every encode or decode fails with
    /// `CodecError::Unavailable` naming it (`unavailable.rs`).
    Unavailable(Kind),
}

impl Build {
    pub fn kind(&self) -> Kind {
        match self {
            Build::ArrayToArray(_) => Kind::ArrayToArray,
            Build::ArrayToBytes(_) => Kind::ArrayToBytes,
            Build::BytesToBytes(_) => Kind::BytesToBytes,
            Build::Unavailable(kind) => *kind,
        }
    }
}

/// A small chain that uses the codec, for the registry's own tests: every registered codec must
/// build, run and write its metadata back unchanged.
// Read by the registry's tests only.
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Example {
    /// The array's data type, as `zarr.json` spells it.
    pub data_type: &'static str,
    /// The `codecs` member of a chain that holds the codec, as JSON.
    pub codecs: &'static str,
}

/// Everything the rest of zarrdb needs to know about one codec, handed over by its module.
#[derive(Clone, Copy)]
pub(crate) struct Registration {
    /// The names `zarr.json` may give it; the first is the one zarrdb writes.
    pub names: &'static [&'static str],
    pub build: Build,
    /// Refused on a variable-length data type before the vlen codec (it moves fixed-size
    /// elements); other codecs check the types they take themselves.
    pub fixed_size_only: bool,
    /// The source file of the module the codec lives in (`file!()`), where its names may appear.
    #[cfg_attr(not(test), allow(dead_code))]
    pub home: &'static str,
    /// A chain using it; `None` for codecs this build does not run.
    #[cfg_attr(not(test), allow(dead_code))]
    pub example: Option<Example>,
    /// Its Zarr v2 form (numcodecs id), if it has one.
    pub v2: Option<V2>,
    /// Its short form with settings (`zstd:7`), if it has one; every codec is also written by its
    /// bare name or as JSON (`short.rs`).
    pub short: Option<Short>,
}

/// Every codec zarrdb knows, run or not. A name appears in one registration only.
pub(crate) static REGISTRY: &[Registration] = &[
    // array -> array
    transpose::REGISTRATION,
    scale_offset::REGISTRATION,
    cast_value::REGISTRATION,
    delta::REGISTRATION,
    fixedscaleoffset::REGISTRATION,
    quantize::REGISTRATION,
    bitround::REGISTRATION,
    astype::REGISTRATION,
    packbits::REGISTRATION,
    // array -> bytes
    bytes::REGISTRATION,
    sharding::REGISTRATION,
    vlen::REGISTRATION_UTF8,
    vlen::REGISTRATION_BYTES,
    // bytes -> bytes
    gzip::REGISTRATION,
    zstd::REGISTRATION,
    blosc::REGISTRATION,
    crc32c::REGISTRATION,
    zlib::REGISTRATION,
    shuffle::REGISTRATION,
    lz4::REGISTRATION,
    bz2::REGISTRATION,
    lzma::REGISTRATION,
    checksum32::REGISTRATION_CRC32,
    checksum32::REGISTRATION_ADLER32,
    checksum32::REGISTRATION_FLETCHER32,
    // known, not run
    unavailable::CATEGORIZE,
    unavailable::ZFPY,
    unavailable::PCODEC,
    unavailable::JENKINS_LOOKUP3,
    unavailable::NUMCODECS_BLOSC,
    unavailable::NUMCODECS_ZSTD,
    unavailable::NUMCODECS_GZIP,
    unavailable::NUMCODECS_CRC32C,
];

/// The registration of the codec `name`, `None` for a name zarrdb does not know.
pub(crate) fn find(name: &str) -> Option<&'static Registration> {
    REGISTRY.iter().find(|r| r.names.contains(&name))
}

/// The codec with the numcodecs id `id` and its v2 form, `None` when no codec has one.
pub(crate) fn find_v2(id: &str) -> Option<(&'static Registration, &'static V2)> {
    REGISTRY.iter().find_map(|r| r.v2.as_ref().filter(|v2| v2.id == id).map(|v2| (r, v2)))
}

/// The numcodecs ids a v2 compressor may have, for messages.
pub(crate) fn v2_compressor_ids() -> Vec<&'static str> {
    REGISTRY.iter().filter_map(|r| r.v2.as_ref()).filter(|v2| v2.compressor.is_some()).map(|v2| v2.id).collect()
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
