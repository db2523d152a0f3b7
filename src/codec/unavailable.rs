//! numcodecs codecs that zarr-python 3 can write under a `numcodecs.<id>` name but zarrdb cannot
//! run, each registered (`registry.rs`) with its kind. An array using one still opens, imports and exports (its chunks are copied byte for byte
//! and its metadata written back as it was); encoding or decoding a chunk fails with
//! `CodecError::Unavailable` naming the codec. A name outside the registry stays an unknown codec,
//! which the spec requires an implementation to refuse.

use std::borrow::Cow;

use super::registry::{Build, Kind, Registration};
use super::{ArrayToArray, ArrayToBytes, BytesToBytes, ChunkSpec};
use crate::error::CodecError;
use crate::metadata::NamedConfig;

/// A codec of `kind` that zarrdb knows by `name` and cannot run. (Its configuration is not
/// checked: nothing here reads it.)
const fn known(name: &'static [&'static str], kind: Kind) -> Registration {
    Registration {
        names: name,
        build: Build::Unavailable(kind),
        fixed_size_only: false,
        home: file!(),
        example: None,
        v2: None,
        short: None,
    }
}

// The known numcodecs codecs zarrdb does not run, with their kind in zarr-python 3's
// `numcodecs.zarr3` module.
pub(crate) const CATEGORIZE: Registration = known(&["numcodecs.categorize"], Kind::ArrayToArray);
pub(crate) const ZFPY: Registration = known(&["numcodecs.zfpy"], Kind::ArrayToBytes);
pub(crate) const PCODEC: Registration = known(&["numcodecs.pcodec"], Kind::ArrayToBytes);
pub(crate) const JENKINS_LOOKUP3: Registration = known(&["numcodecs.jenkins_lookup3"], Kind::BytesToBytes);
pub(crate) const NUMCODECS_BLOSC: Registration = known(&["numcodecs.blosc"], Kind::BytesToBytes);
pub(crate) const NUMCODECS_ZSTD: Registration = known(&["numcodecs.zstd"], Kind::BytesToBytes);
pub(crate) const NUMCODECS_GZIP: Registration = known(&["numcodecs.gzip"], Kind::BytesToBytes);
pub(crate) const NUMCODECS_CRC32C: Registration = known(&["numcodecs.crc32c"], Kind::BytesToBytes);

/// A stand-in for a codec zarrdb cannot run: it keeps the codec's metadata and fails every
/// encode and decode.
#[derive(Debug)]
pub(crate) struct Unavailable {
    meta: NamedConfig,
}

impl Unavailable {
    pub fn new(meta: &NamedConfig) -> Unavailable {
        Unavailable { meta: meta.clone() }
    }

    fn error(&self) -> CodecError {
        CodecError::Unavailable { name: self.meta.name.clone() }
    }
}

impl ArrayToArray for Unavailable {
    /// Unknown without running the codec; nothing reaches the stages after it, since the chain
    /// fails first (`CodecChain::unavailable`).
    fn encoded_spec(&self, decoded: &ChunkSpec) -> ChunkSpec {
        decoded.clone()
    }

    fn encode(&self, _decoded: Cow<'_, [u8]>, _spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        Err(self.error())
    }

    fn decode(&self, _encoded: Vec<u8>, _spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        Err(self.error())
    }

    fn to_metadata(&self) -> NamedConfig {
        self.meta.clone()
    }
}

impl ArrayToBytes for Unavailable {
    fn encode<'a>(&self, _decoded: Cow<'a, [u8]>, _spec: &ChunkSpec) -> Result<Cow<'a, [u8]>, CodecError> {
        Err(self.error())
    }

    fn decode(&self, _encoded: Cow<'_, [u8]>, _spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        Err(self.error())
    }

    fn max_encoded_size(&self, spec: &ChunkSpec) -> u64 {
        spec.num_bytes()
    }

    fn fixed_encoded_size(&self, _spec: &ChunkSpec) -> Option<u64> {
        None
    }

    fn to_metadata(&self) -> NamedConfig {
        self.meta.clone()
    }
}

impl BytesToBytes for Unavailable {
    fn encode(&self, _decoded: Cow<'_, [u8]>) -> Result<Vec<u8>, CodecError> {
        Err(self.error())
    }

    fn decode(&self, _encoded: Cow<'_, [u8]>, _max_decoded: u64) -> Result<Vec<u8>, CodecError> {
        Err(self.error())
    }

    fn max_encoded_size(&self, decoded: u64) -> u64 {
        decoded
    }

    fn fixed_encoded_size(&self, _decoded: u64) -> Option<u64> {
        None
    }

    fn to_metadata(&self) -> NamedConfig {
        self.meta.clone()
    }
}
