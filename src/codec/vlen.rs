//! `vlen-utf8` and `vlen-bytes`: the array -> bytes codecs of the variable-length types `string`
//! and `variable_length_bytes`, in numcodecs' layout: the item count as a little-endian `u32`,
//! then each item as a little-endian `u32` length and its bytes, in C order.
//!
//! A decoded chunk of a variable-length type is held in this same layout (the "item list"), so
//! the codec itself only checks it: the count must match the chunk, every length must fit the
//! buffer, nothing may follow the last item, and `vlen-utf8` items must be UTF-8. The array layer
//! reads and writes items through [`items`] and [`build`].

use std::borrow::Cow;
use std::ops::Range;

use super::registry::{Build, Example, Registration};
use super::{ArrayToBytes, ChunkSpec};
use crate::error::CodecError;
use crate::metadata::{DataType, NamedConfig};

/// The codec of `string` arrays.
pub(crate) const UTF8: &str = "vlen-utf8";

/// The codec of `variable_length_bytes` arrays.
pub(crate) const BYTES: &str = "vlen-bytes";

/// The largest item list a chunk may hold: decompressors stop here, so a hostile stream cannot
/// make a variable-length chunk allocate more.
pub(crate) const MAX_CHUNK_BYTES: u64 = 1 << 30;

/// The array -> bytes codec a variable-length data type needs, `None` for fixed-size types.
pub(crate) fn codec_name(data_type: &DataType) -> Option<&'static str> {
    match data_type {
        DataType::String => Some(UTF8),
        DataType::Bytes => Some(BYTES),
        _ => None,
    }
}

/// `vlen-utf8` (`utf8: true`) or `vlen-bytes`.
#[derive(Debug)]
pub(crate) struct Vlen {
    utf8: bool,
}

impl Vlen {
    pub fn from_metadata(meta: &NamedConfig, data_type: DataType) -> Result<Vlen, CodecError> {
        if let Some(field) = meta.configuration.as_ref().and_then(|c| c.keys().next()) {
            return Err(CodecError::InvalidConfiguration {
                codec: meta.name.clone(),
                field: field.clone(),
                reason: "the codec takes no configuration".into(),
            });
        }
        if codec_name(&data_type) != Some(meta.name.as_str()) {
            return Err(CodecError::InvalidChain {
                reason: format!("codec \"{}\" does not encode the data type {data_type}", meta.name),
            });
        }
        Ok(Vlen { utf8: data_type == DataType::String })
    }

    fn name(&self) -> &'static str {
        if self.utf8 {
            "vlen-utf8"
        } else {
            "vlen-bytes"
        }
    }
}

fn corrupt(codec: &'static str, reason: impl Into<String>) -> CodecError {
    CodecError::Corrupt { codec, reason: reason.into(), source: None }
}

fn read_u32(buf: &[u8], at: usize) -> Option<u32> {
    let bytes = buf.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// The byte range of every item of an item list holding exactly `expected` items; `utf8` also
/// checks that each item is UTF-8. `codec` names the codec in errors.
pub(crate) fn items(
    buf: &[u8],
    expected: u64,
    utf8: bool,
    codec: &'static str,
) -> Result<Vec<Range<usize>>, CodecError> {
    let count = read_u32(buf, 0).ok_or_else(|| corrupt(codec, format!("{} bytes hold no item count", buf.len())))?;
    if u64::from(count) != expected {
        return Err(corrupt(codec, format!("{count} items stored, the chunk holds {expected}")));
    }
    // Every item takes at least its 4-byte length, so the buffer bounds the allocation even when
    // the metadata claims a huge chunk.
    let mut ranges = Vec::with_capacity((count as usize).min(buf.len() / 4));
    let mut at = 4usize;
    for i in 0..count {
        let len = read_u32(buf, at)
            .ok_or_else(|| corrupt(codec, format!("item {i} of {count}: the length is cut off at byte {at}")))?;
        let start = at + 4;
        let end = start
            .checked_add(len as usize)
            .filter(|&end| end <= buf.len())
            .ok_or_else(|| corrupt(codec, format!("item {i} of {count}: {len} bytes reach past the {}", buf.len())))?;
        if utf8 && std::str::from_utf8(&buf[start..end]).is_err() {
            return Err(corrupt(codec, format!("item {i} of {count} is not UTF-8")));
        }
        ranges.push(start..end);
        at = end;
    }
    if at != buf.len() {
        return Err(corrupt(codec, format!("{} bytes follow the last item", buf.len() - at)));
    }
    Ok(ranges)
}

/// An item list of `items`, in order; refused past [`MAX_CHUNK_BYTES`].
pub(crate) fn build<'a>(
    items: impl ExactSizeIterator<Item = &'a [u8]>,
    codec: &'static str,
) -> Result<Vec<u8>, CodecError> {
    let count = u32::try_from(items.len()).map_err(|_| CodecError::Encode {
        codec,
        reason: format!("{} items do not fit a u32 count", items.len()),
        source: None,
    })?;
    let mut out = Vec::new();
    out.extend_from_slice(&count.to_le_bytes());
    for item in items {
        if (out.len() + 4 + item.len()) as u64 > MAX_CHUNK_BYTES {
            return Err(CodecError::TooLarge { codec, limit: MAX_CHUNK_BYTES });
        }
        out.extend_from_slice(&(item.len() as u32).to_le_bytes());
        out.extend_from_slice(item);
    }
    Ok(out)
}

impl ArrayToBytes for Vlen {
    fn encode<'a>(&self, decoded: Cow<'a, [u8]>, spec: &ChunkSpec) -> Result<Cow<'a, [u8]>, CodecError> {
        // Item lists are built by `build`, so this only guards against a caller's malformed one.
        items(&decoded, spec.num_elements(), self.utf8, self.name())?;
        Ok(decoded)
    }

    fn decode(&self, encoded: Cow<'_, [u8]>, spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        items(&encoded, spec.num_elements(), self.utf8, self.name())?;
        Ok(encoded.into_owned())
    }

    fn decode_in_place(&self, data: &mut [u8], spec: &ChunkSpec) -> Option<Result<(), CodecError>> {
        Some(items(data, spec.num_elements(), self.utf8, self.name()).map(drop))
    }

    fn max_encoded_size(&self, _spec: &ChunkSpec) -> u64 {
        MAX_CHUNK_BYTES
    }

    fn fixed_encoded_size(&self, _spec: &ChunkSpec) -> Option<u64> {
        None
    }

    fn to_metadata(&self) -> NamedConfig {
        NamedConfig::with_configuration(self.name(), serde_json::Map::new())
    }
}

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION_UTF8: Registration = Registration {
    names: &[UTF8],
    build: Build::ArrayToBytes(|meta, decoded| Ok(Box::new(Vlen::from_metadata(meta, decoded.data_type.clone())?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example { data_type: "string", codecs: r#"[{"name": "vlen-utf8"}]"# }),
    v2: None,
    short: None,
};

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION_BYTES: Registration = Registration {
    names: &[BYTES],
    build: Build::ArrayToBytes(|meta, decoded| Ok(Box::new(Vlen::from_metadata(meta, decoded.data_type.clone())?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example { data_type: "variable_length_bytes", codecs: r#"[{"name": "vlen-bytes"}]"# }),
    v2: None,
    short: None,
};

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{build, items};

    proptest! {
        /// Any bytes, any expected count: an error or ranges inside the buffer, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(buf in proptest::collection::vec(any::<u8>(), 0..64), expected in 0u64..8, utf8: bool) {
            if let Ok(ranges) = items(&buf, expected, utf8, "vlen-bytes") {
                prop_assert_eq!(ranges.len() as u64, expected);
                prop_assert!(ranges.iter().all(|r| r.end <= buf.len()));
            }
        }

        /// Lists built from any items read back as those items.
        #[test]
        fn built_lists_read_back(list in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..9), 0..9)) {
            let built = build(list.iter().map(Vec::as_slice), "vlen-bytes").unwrap();
            let ranges = items(&built, list.len() as u64, false, "vlen-bytes").unwrap();
            let read: Vec<&[u8]> = ranges.into_iter().map(|r| &built[r]).collect();
            prop_assert_eq!(read, list.iter().map(Vec::as_slice).collect::<Vec<_>>());
        }
    }

    #[test]
    fn builds_numcodecs_layout_and_reads_it_back() {
        let list = build([&b"alpha"[..], b"", "b\u{e9}".as_bytes()].into_iter(), "vlen-utf8").unwrap();
        assert_eq!(&list[..8], &[3, 0, 0, 0, 5, 0, 0, 0]);
        let ranges = items(&list, 3, true, "vlen-utf8").unwrap();
        assert_eq!(&list[ranges[0].clone()], b"alpha");
        assert!(ranges[1].is_empty());
        assert_eq!(&list[ranges[2].clone()], "b\u{e9}".as_bytes());
    }

    #[test]
    fn refuses_every_malformed_list() {
        let good = build([&b"ab"[..], b"c"].into_iter(), "vlen-bytes").unwrap();
        let mut trailing = good.clone();
        trailing.push(0);
        let mut long = good.clone();
        long[4] = 200;
        let mut huge_count = good.clone();
        huge_count[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        for (name, bad, expected) in [
            ("empty", vec![], 2),
            ("wrong count", good.clone(), 3),
            ("trailing byte", trailing, 2),
            ("length past the end", long, 2),
            ("cut length", good[..9].to_vec(), 2),
            ("count larger than the chunk", huge_count, u64::from(u32::MAX)),
        ] {
            assert!(items(&bad, expected, false, "vlen-bytes").is_err(), "{name}");
        }
        let invalid_utf8 = build([&[0xff, 0xfe][..]].into_iter(), "vlen-utf8").unwrap();
        assert!(items(&invalid_utf8, 1, false, "vlen-bytes").is_ok());
        assert!(items(&invalid_utf8, 1, true, "vlen-utf8").is_err());
    }
}
