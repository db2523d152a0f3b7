//! Chunk key encodings: how grid coordinates become store keys (spec "chunk_key_encoding").

use serde_json::{json, Value};

use super::json::{as_object, as_str, configuration, invalid, only_members, required};
use crate::error::MetadataError;

const FIELD: &str = "chunk_key_encoding";

/// The separator between chunk coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Separator {
    /// `/`
    Slash,
    /// `.`
    Dot,
}

impl Separator {
    fn as_char(self) -> char {
        match self {
            Separator::Slash => '/',
            Separator::Dot => '.',
        }
    }
}

/// A chunk key encoding of the core spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChunkKeyEncoding {
    /// `default`: `c` then each coordinate behind a separator (`c/1/0`); `c` for 0-d arrays.
    Default(Separator),
    /// `v2`: coordinates joined by the separator (`1.0`); `0` for 0-d arrays.
    V2(Separator),
}

impl Default for ChunkKeyEncoding {
    fn default() -> Self {
        ChunkKeyEncoding::Default(Separator::Slash)
    }
}

impl ChunkKeyEncoding {
    /// The key of the chunk at `coords`, relative to the array's prefix.
    ///
    /// ```
    /// use zarrdb::metadata::{ChunkKeyEncoding, Separator};
    /// assert_eq!(ChunkKeyEncoding::Default(Separator::Slash).encode(&[1, 23, 45]), "c/1/23/45");
    /// assert_eq!(ChunkKeyEncoding::V2(Separator::Dot).encode(&[1, 23, 45]), "1.23.45");
    /// assert_eq!(ChunkKeyEncoding::V2(Separator::Dot).encode(&[]), "0");
    /// ```
    pub fn encode(&self, coords: &[u64]) -> String {
        let mut key = String::with_capacity(2 + coords.len() * 4);
        match self {
            ChunkKeyEncoding::Default(sep) => {
                key.push('c');
                for c in coords {
                    key.push(sep.as_char());
                    key.push_str(&c.to_string());
                }
            }
            ChunkKeyEncoding::V2(sep) => {
                if coords.is_empty() {
                    key.push('0');
                }
                for (i, c) in coords.iter().enumerate() {
                    if i > 0 {
                        key.push(sep.as_char());
                    }
                    key.push_str(&c.to_string());
                }
            }
        }
        key
    }

    /// The coordinates of a chunk key of rank `rank`, or `None` if the key is not one.
    pub fn decode(&self, key: &str, rank: usize) -> Option<Vec<u64>> {
        let (rest, sep) = match self {
            ChunkKeyEncoding::Default(sep) => {
                let rest = key.strip_prefix('c')?;
                if rank == 0 {
                    return rest.is_empty().then(Vec::new);
                }
                (rest.strip_prefix(sep.as_char())?, sep)
            }
            ChunkKeyEncoding::V2(sep) => {
                if rank == 0 {
                    return (key == "0").then(Vec::new);
                }
                (key, sep)
            }
        };
        let coords: Vec<u64> = rest
            .split(sep.as_char())
            .map(|part| {
                // Only canonical decimals name chunks: "01" or "+1" are not chunk keys.
                let canonical = !part.is_empty()
                    && part.bytes().all(|b| b.is_ascii_digit())
                    && (part == "0" || !part.starts_with('0'));
                canonical.then(|| part.parse().ok()).flatten()
            })
            .collect::<Option<_>>()?;
        (coords.len() == rank).then_some(coords)
    }

    pub(crate) fn from_json(value: &Value) -> Result<ChunkKeyEncoding, MetadataError> {
        let obj = as_object(value, FIELD)?;
        only_members(obj, &["name", "configuration"], FIELD)?;
        let name = as_str(required(obj, "name", "chunk_key_encoding.name")?, "chunk_key_encoding.name")?;
        let config = configuration(obj, FIELD)?;
        let field = "chunk_key_encoding.configuration.separator";
        let separator = match config {
            Some(config) => {
                only_members(config, &["separator"], "chunk_key_encoding.configuration")?;
                match config.get("separator") {
                    None => None,
                    Some(value) => Some(match as_str(value, field)? {
                        "/" => Separator::Slash,
                        "." => Separator::Dot,
                        other => {
                            return Err(invalid(field, format!("separator must be \"/\" or \".\", found \"{other}\"")))
                        }
                    }),
                }
            }
            None => None,
        };
        match name {
            "default" => Ok(ChunkKeyEncoding::Default(separator.unwrap_or(Separator::Slash))),
            "v2" => Ok(ChunkKeyEncoding::V2(separator.unwrap_or(Separator::Dot))),
            other => Err(MetadataError::Unsupported {
                field: "chunk_key_encoding.name".into(),
                kind: "chunk key encoding",
                name: other.into(),
            }),
        }
    }

    pub(crate) fn to_json(self) -> Value {
        let (name, sep) = match self {
            ChunkKeyEncoding::Default(sep) => ("default", sep),
            ChunkKeyEncoding::V2(sep) => ("v2", sep),
        };
        json!({"name": name, "configuration": {"separator": sep.as_char().to_string()}})
    }
}
