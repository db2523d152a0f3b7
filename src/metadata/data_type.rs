//! The data types of the core spec, plus `bfloat16` as an extension.

use std::fmt;

use serde_json::Value;

use super::json::{as_object, as_str, invalid, only_members, wrong_type};
use crate::error::MetadataError;

/// The element type of an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DataType {
    /// `bool`: one byte, 0 or 1.
    Bool,
    /// `int8`
    Int8,
    /// `int16`
    Int16,
    /// `int32`
    Int32,
    /// `int64`
    Int64,
    /// `uint8`
    UInt8,
    /// `uint16`
    UInt16,
    /// `uint32`
    UInt32,
    /// `uint64`
    UInt64,
    /// `float16` (IEEE 754 half precision)
    Float16,
    /// `float32`
    Float32,
    /// `float64`
    Float64,
    /// `complex64`: two float32, real then imaginary.
    Complex64,
    /// `complex128`: two float64, real then imaginary.
    Complex128,
    /// `r<bits>`: raw bytes, `bits` a positive multiple of 8.
    Raw {
        /// The width in bits.
        bits: u32,
    },
    /// `bfloat16` (extension used by tensorstore).
    BFloat16,
}

/// How the bytes of one element are ordered, which decides how endianness conversion works.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Bytes copied as they are (bool, int8, uint8, raw).
    Bytes,
    /// One scalar of this many bytes.
    Scalar(usize),
    /// Two scalars of this many bytes each (complex).
    Pair(usize),
}

impl DataType {
    /// Every data type with a fixed name (raw types excluded).
    pub const NAMED: [DataType; 15] = [
        DataType::Bool,
        DataType::Int8,
        DataType::Int16,
        DataType::Int32,
        DataType::Int64,
        DataType::UInt8,
        DataType::UInt16,
        DataType::UInt32,
        DataType::UInt64,
        DataType::Float16,
        DataType::Float32,
        DataType::Float64,
        DataType::Complex64,
        DataType::Complex128,
        DataType::BFloat16,
    ];

    /// The identifier used in `zarr.json`.
    ///
    /// ```
    /// assert_eq!(zarrdb::DataType::Float32.name(), "float32");
    /// assert_eq!(zarrdb::DataType::Raw { bits: 16 }.name(), "r16");
    /// ```
    pub fn name(&self) -> String {
        match self {
            DataType::Raw { bits } => format!("r{bits}"),
            other => other.static_name().to_owned(),
        }
    }

    fn static_name(&self) -> &'static str {
        match self {
            DataType::Bool => "bool",
            DataType::Int8 => "int8",
            DataType::Int16 => "int16",
            DataType::Int32 => "int32",
            DataType::Int64 => "int64",
            DataType::UInt8 => "uint8",
            DataType::UInt16 => "uint16",
            DataType::UInt32 => "uint32",
            DataType::UInt64 => "uint64",
            DataType::Float16 => "float16",
            DataType::Float32 => "float32",
            DataType::Float64 => "float64",
            DataType::Complex64 => "complex64",
            DataType::Complex128 => "complex128",
            DataType::BFloat16 => "bfloat16",
            DataType::Raw { .. } => "raw",
        }
    }

    /// Size of one element in bytes.
    pub fn size(&self) -> usize {
        match self.layout() {
            Layout::Bytes => match self {
                DataType::Raw { bits } => *bits as usize / 8,
                _ => 1,
            },
            Layout::Scalar(n) => n,
            Layout::Pair(n) => 2 * n,
        }
    }

    pub(crate) fn layout(&self) -> Layout {
        match self {
            DataType::Bool | DataType::Int8 | DataType::UInt8 | DataType::Raw { .. } => Layout::Bytes,
            DataType::Int16 | DataType::UInt16 | DataType::Float16 | DataType::BFloat16 => Layout::Scalar(2),
            DataType::Int32 | DataType::UInt32 | DataType::Float32 => Layout::Scalar(4),
            DataType::Int64 | DataType::UInt64 | DataType::Float64 => Layout::Scalar(8),
            DataType::Complex64 => Layout::Pair(4),
            DataType::Complex128 => Layout::Pair(8),
        }
    }

    /// Parse the `data_type` member.
    pub(crate) fn from_json(value: &Value) -> Result<DataType, MetadataError> {
        const FIELD: &str = "data_type";
        let name = match value {
            Value::String(s) => s.as_str(),
            // The object form is for extension data types only; bfloat16 is our one extension.
            Value::Object(obj) => {
                only_members(obj, &["name", "configuration"], FIELD)?;
                let name = as_str(obj.get("name").unwrap_or(&Value::Null), "data_type.name")?;
                if name != "bfloat16" {
                    return Err(MetadataError::Unsupported {
                        field: FIELD.into(),
                        kind: "data type",
                        name: name.into(),
                    });
                }
                if let Some(config) = obj.get("configuration") {
                    if !as_object(config, "data_type.configuration")?.is_empty() {
                        return Err(invalid(FIELD, format!("data type \"{name}\" takes no configuration")));
                    }
                }
                name
            }
            other => return Err(wrong_type(FIELD, "a string or an object", other)),
        };
        if let Some(dt) = DataType::NAMED.iter().find(|dt| dt.static_name() == name) {
            return Ok(*dt);
        }
        if let Some(bits) = name.strip_prefix('r') {
            if !bits.is_empty() && bits.bytes().all(|b| b.is_ascii_digit()) && !bits.starts_with('0') {
                let bits: u32 = bits.parse().map_err(|_| invalid(FIELD, format!("raw type \"{name}\" is too wide")))?;
                if bits % 8 != 0 {
                    return Err(invalid(FIELD, format!("raw type \"{name}\": bits must be a multiple of 8")));
                }
                if bits > 1 << 20 {
                    return Err(invalid(FIELD, format!("raw type \"{name}\" is wider than 1 Mibit")));
                }
                return Ok(DataType::Raw { bits });
            }
        }
        Err(MetadataError::Unsupported { field: FIELD.into(), kind: "data type", name: name.into() })
    }

    pub(crate) fn to_json(self) -> Value {
        Value::String(self.name())
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}
