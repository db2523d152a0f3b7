//! The data types of the core spec, plus the extensions real datasets hold: `bfloat16`
//! (tensorstore), and the text, bytes and time types zarr-python 3.1 writes for NumPy's `U`, `S`,
//! object, `M8` and `m8` arrays.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::json::{as_object, as_str, as_u64, invalid, only_members, required, wrong_type};
use super::time_unit::TimeUnit;
use crate::error::MetadataError;

/// The widest fixed-size element accepted (raw, text and byte-string types): 128 KiB (1 Mibit).
const MAX_ELEMENT_BYTES: u64 = 1 << 17;

/// The element type of an array. Cheap to clone: the one type with a field list
/// ([`DataType::Structured`]) shares it.
///
/// ```
/// use zarrdb::DataType;
/// assert_eq!(DataType::Float64.size(), 8);
/// assert_eq!(DataType::Int16.to_string(), "int16");
/// assert!(DataType::String.is_variable_length());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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
    /// `string`: variable-length UTF-8 text, one Rust `String` per element (zarr-python's
    /// `VariableLengthUTF8`, NumPy's `StringDType` or object arrays of `str`). Stored with the
    /// `vlen-utf8` codec.
    String,
    /// `variable_length_bytes`: a variable-length byte string per element (`Vec<u8>`), stored
    /// with the `vlen-bytes` codec.
    Bytes,
    /// `fixed_length_utf32`: NumPy's `<U{n}`, `n` UTF-32 code units per element, padded with
    /// zero code units (`length_bytes` = 4·n).
    FixedLengthUtf32 {
        /// The element size in bytes, a positive multiple of 4.
        length_bytes: u32,
    },
    /// `null_terminated_bytes`: NumPy's `S{n}`, byte strings of at most `length_bytes` bytes,
    /// padded with zero bytes.
    NullTerminatedBytes {
        /// The element size in bytes.
        length_bytes: u32,
    },
    /// `numpy.datetime64`: a signed 64-bit count of `scale_factor`·`unit` since 1970-01-01,
    /// `i64::MIN` being NaT.
    DateTime64 {
        /// The unit of one tick.
        unit: TimeUnit,
        /// Units per tick, 1 ≤ scale_factor < 2³¹.
        scale_factor: u32,
    },
    /// `numpy.timedelta64`: a signed 64-bit count of `scale_factor`·`unit`, `i64::MIN` being NaT.
    TimeDelta64 {
        /// The unit of one tick.
        unit: TimeUnit,
        /// Units per tick, 1 ≤ scale_factor < 2³¹.
        scale_factor: u32,
    },
    /// `structured`: NumPy's structured (record) types as zarr-python writes them, each element
    /// the fields' little-endian values one after the other, packed.
    Structured(Arc<StructuredType>),
}

/// The fields of a [`DataType::Structured`]: each a name and a fixed-size data type, and the
/// spelling the type is written in.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct StructuredType {
    fields: Vec<(String, DataType)>,
    size: usize,
    spelling: StructSpelling,
}

/// How a structured type is spelled in `zarr.json`: the two names zarr-python has written for
/// it. A type is written back in the spelling it was read in, so an array keeps the form the
/// writer (and the readers it was written for) know.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StructSpelling {
    /// `"structured"` (zarr-python 3.0 to 3.1): fields as `[name, data_type]` pairs, the fill
    /// value as the element's bytes in base64. zarr-python 3.1 reads only this spelling.
    #[default]
    Structured,
    /// `"struct"` (zarr-extensions, written by zarr-python 3.4): fields as
    /// `{"name": ..., "data_type": ...}` objects, the fill value an object of the fields' fill
    /// values.
    Struct,
}

impl StructSpelling {
    /// The data type's name in this spelling.
    pub fn name(self) -> &'static str {
        match self {
            StructSpelling::Structured => "structured",
            StructSpelling::Struct => "struct",
        }
    }
}

impl StructuredType {
    /// A structured type of these fields, in order; refused when a name repeats or is empty, a
    /// field has no fixed size, or there are no fields.
    pub fn new(fields: Vec<(String, DataType)>) -> Result<StructuredType, MetadataError> {
        const FIELD: &str = "data_type.configuration.fields";
        if fields.is_empty() {
            return Err(invalid(FIELD, "a structured type needs at least one field"));
        }
        let mut size = 0usize;
        for (i, (name, data_type)) in fields.iter().enumerate() {
            if name.is_empty() || fields[..i].iter().any(|(other, _)| other == name) {
                return Err(invalid(FIELD, format!("field {i}: the name \"{name}\" is empty or repeated")));
            }
            if data_type.is_variable_length() {
                return Err(invalid(FIELD, format!("field \"{name}\": {data_type} has no fixed size")));
            }
            size += data_type.size();
            if size as u64 > MAX_ELEMENT_BYTES {
                return Err(invalid(FIELD, format!("the fields are wider than {MAX_ELEMENT_BYTES} bytes")));
            }
        }
        Ok(StructuredType { fields, size, spelling: StructSpelling::Structured })
    }

    /// The same type written in `spelling`.
    pub fn with_spelling(mut self, spelling: StructSpelling) -> StructuredType {
        self.spelling = spelling;
        self
    }

    /// The spelling the type is written in.
    pub fn spelling(&self) -> StructSpelling {
        self.spelling
    }

    /// The fields, in order.
    pub fn fields(&self) -> &[(String, DataType)] {
        &self.fields
    }

    /// The fields with their byte offsets in an element.
    pub fn offsets(&self) -> impl Iterator<Item = (&str, &DataType, usize)> {
        self.fields.iter().scan(0, |at, (name, dt)| {
            let offset = *at;
            *at += dt.size();
            Some((name.as_str(), dt, offset))
        })
    }
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
    /// A sequence of scalars of this many bytes each (UTF-32 code units).
    Units(usize),
    /// No fixed size: a decoded chunk is an item list (see `codec::vlen`), not element bytes.
    Variable,
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
            DataType::FixedLengthUtf32 { length_bytes } => format!("fixed_length_utf32[{length_bytes}]"),
            DataType::NullTerminatedBytes { length_bytes } => format!("null_terminated_bytes[{length_bytes}]"),
            DataType::DateTime64 { unit, scale_factor } | DataType::TimeDelta64 { unit, scale_factor } => {
                format!("{}[{scale_factor}{unit}]", self.static_name())
            }
            DataType::Structured(s) => {
                let fields: Vec<String> = s.fields.iter().map(|(n, dt)| format!("{n}: {dt}")).collect();
                format!("{}{{{}}}", s.spelling.name(), fields.join(", "))
            }
            other => other.static_name().to_owned(),
        }
    }

    /// Whether this is one of the eight integer types.
    pub fn is_integer(&self) -> bool {
        matches!(
            self,
            DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::UInt8
                | DataType::UInt16
                | DataType::UInt32
                | DataType::UInt64
        )
    }

    /// Whether this is `float16`, `float32` or `float64` (IEEE 754).
    pub fn is_float(&self) -> bool {
        matches!(self, DataType::Float16 | DataType::Float32 | DataType::Float64)
    }

    /// Whether elements have no fixed size (`string`, `variable_length_bytes`): such arrays are
    /// read and written as items ([`crate::Array::read_items`]), not as element bytes.
    pub fn is_variable_length(&self) -> bool {
        self.layout() == Layout::Variable
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
            DataType::String => "string",
            DataType::Bytes => "variable_length_bytes",
            DataType::FixedLengthUtf32 { .. } => "fixed_length_utf32",
            DataType::NullTerminatedBytes { .. } => "null_terminated_bytes",
            DataType::DateTime64 { .. } => "numpy.datetime64",
            DataType::TimeDelta64 { .. } => "numpy.timedelta64",
            DataType::Structured(s) => s.spelling.name(),
        }
    }

    /// Size of one element in bytes; 0 for variable-length types, whose elements have no fixed
    /// size (see [`DataType::is_variable_length`]).
    pub fn size(&self) -> usize {
        match self.layout() {
            Layout::Bytes => match self {
                DataType::Raw { bits } => *bits as usize / 8,
                DataType::NullTerminatedBytes { length_bytes } => *length_bytes as usize,
                DataType::Structured(s) => s.size,
                _ => 1,
            },
            Layout::Scalar(n) => n,
            Layout::Pair(n) => 2 * n,
            Layout::Units(_) => match self {
                DataType::FixedLengthUtf32 { length_bytes } => *length_bytes as usize,
                _ => 0,
            },
            Layout::Variable => 0,
        }
    }

    pub(crate) fn layout(&self) -> Layout {
        match self {
            DataType::Bool
            | DataType::Int8
            | DataType::UInt8
            | DataType::Raw { .. }
            | DataType::NullTerminatedBytes { .. }
            // Fields are stored little-endian whatever the `bytes` codec says (zarr-python writes
            // it without `endian`), so the element is opaque bytes to every codec.
            | DataType::Structured(_) => Layout::Bytes,
            DataType::Int16 | DataType::UInt16 | DataType::Float16 | DataType::BFloat16 => Layout::Scalar(2),
            DataType::Int32 | DataType::UInt32 | DataType::Float32 => Layout::Scalar(4),
            DataType::Int64
            | DataType::UInt64
            | DataType::Float64
            | DataType::DateTime64 { .. }
            | DataType::TimeDelta64 { .. } => Layout::Scalar(8),
            DataType::FixedLengthUtf32 { .. } => Layout::Units(4),
            DataType::String | DataType::Bytes => Layout::Variable,
            DataType::Complex64 => Layout::Pair(4),
            DataType::Complex128 => Layout::Pair(8),
        }
    }

    /// A data type as a `zarr.json` document's `data_type` member spells it: a name
    /// (`"float32"`) or an extension's object (`{"name": "numpy.datetime64", "configuration":
    /// {...}}`).
    ///
    /// ```
    /// use zarrdb::DataType;
    /// assert_eq!(DataType::from_json(&"uint16".into())?, DataType::UInt16);
    /// assert!(DataType::from_json(&"uint12".into()).is_err());
    /// # Ok::<(), zarrdb::error::MetadataError>(())
    /// ```
    pub fn from_json(value: &Value) -> Result<DataType, MetadataError> {
        const FIELD: &str = "data_type";
        let name = match value {
            Value::String(s) => s.as_str(),
            // The object form names an extension data type with its configuration.
            Value::Object(obj) => return DataType::from_object(obj),
            other => return Err(wrong_type(FIELD, "a string or an object", other)),
        };
        match name {
            "string" => return Ok(DataType::String),
            "variable_length_bytes" => return Ok(DataType::Bytes),
            _ => {}
        }
        if let Some(dt) = DataType::NAMED.iter().find(|dt| dt.static_name() == name) {
            return Ok(dt.clone());
        }
        if let Some(bits) = name.strip_prefix('r') {
            if !bits.is_empty() && bits.bytes().all(|b| b.is_ascii_digit()) && !bits.starts_with('0') {
                let bits: u32 = bits.parse().map_err(|_| invalid(FIELD, format!("raw type \"{name}\" is too wide")))?;
                if bits % 8 != 0 {
                    return Err(invalid(FIELD, format!("raw type \"{name}\": bits must be a multiple of 8")));
                }
                if u64::from(bits) > MAX_ELEMENT_BYTES * 8 {
                    return Err(invalid(FIELD, format!("raw type \"{name}\" is wider than 1 Mibit")));
                }
                return Ok(DataType::Raw { bits });
            }
        }
        Err(MetadataError::Unsupported { field: FIELD.into(), kind: "data type", name: name.into() })
    }

    /// The object form `{"name": ..., "configuration": {...}}`; every configuration member is
    /// required and no other is allowed, as zarr-python writes them.
    fn from_object(obj: &serde_json::Map<String, Value>) -> Result<DataType, MetadataError> {
        const FIELD: &str = "data_type";
        const CONFIG: &str = "data_type.configuration";
        only_members(obj, &["name", "configuration"], FIELD)?;
        let name = as_str(required(obj, "name", "data_type.name")?, "data_type.name")?;
        let empty = serde_json::Map::new();
        let config = match obj.get("configuration") {
            Some(config) => as_object(config, CONFIG)?,
            None => &empty,
        };
        let config_members = |allowed: &[&str]| -> Result<(), MetadataError> {
            only_members(config, allowed, CONFIG)?;
            allowed.iter().try_for_each(|m| required(config, m, &format!("{CONFIG}.{m}")).map(drop))
        };
        let length_bytes = || -> Result<u32, MetadataError> {
            let field = "data_type.configuration.length_bytes";
            let n = as_u64(required(config, "length_bytes", field)?, field)?;
            if n == 0 || n > MAX_ELEMENT_BYTES {
                return Err(invalid(field, format!("{n} is not in 1..={MAX_ELEMENT_BYTES}")));
            }
            Ok(n as u32)
        };
        match name {
            "bfloat16" | "string" | "variable_length_bytes" => {
                config_members(&[])?;
                DataType::from_json(&Value::String(name.to_owned()))
            }
            "fixed_length_utf32" => {
                config_members(&["length_bytes"])?;
                let length_bytes = length_bytes()?;
                if length_bytes % 4 != 0 {
                    return Err(invalid(
                        "data_type.configuration.length_bytes",
                        format!("{length_bytes} is not a multiple of 4 (one UTF-32 code unit)"),
                    ));
                }
                Ok(DataType::FixedLengthUtf32 { length_bytes })
            }
            "null_terminated_bytes" => {
                config_members(&["length_bytes"])?;
                Ok(DataType::NullTerminatedBytes { length_bytes: length_bytes()? })
            }
            "numpy.datetime64" | "numpy.timedelta64" => {
                config_members(&["unit", "scale_factor"])?;
                let unit_field = "data_type.configuration.unit";
                let unit_name = as_str(required(config, "unit", unit_field)?, unit_field)?;
                let unit = TimeUnit::from_name(unit_name)
                    .ok_or_else(|| invalid(unit_field, format!("\"{unit_name}\" is not a NumPy time unit")))?;
                let scale_field = "data_type.configuration.scale_factor";
                let scale = as_u64(required(config, "scale_factor", scale_field)?, scale_field)?;
                if scale == 0 || scale >= 1 << 31 {
                    return Err(invalid(scale_field, format!("{scale} is not in 1..2^31")));
                }
                let scale_factor = scale as u32;
                Ok(if name == "numpy.datetime64" {
                    DataType::DateTime64 { unit, scale_factor }
                } else {
                    DataType::TimeDelta64 { unit, scale_factor }
                })
            }
            "structured" | "struct" => {
                config_members(&["fields"])?;
                let spelling = if name == "struct" { StructSpelling::Struct } else { StructSpelling::Structured };
                DataType::structured_from_json(required(config, "fields", "data_type.configuration.fields")?, spelling)
            }
            other => Err(MetadataError::Unsupported { field: FIELD.into(), kind: "data type", name: other.into() }),
        }
    }

    /// A structured type's fields: `[[name, data_type], ...]` (`structured`) or
    /// `[{"name": ..., "data_type": ...}, ...]` (`struct`). zarr-python 3.4 reads either form
    /// under either name, and so does this.
    fn structured_from_json(value: &Value, spelling: StructSpelling) -> Result<DataType, MetadataError> {
        const FIELD: &str = "data_type.configuration.fields";
        let list = value.as_array().ok_or_else(|| wrong_type(FIELD, "a list of fields", value))?;
        let mut fields = Vec::with_capacity(list.len().min(1024));
        for (i, pair) in list.iter().enumerate() {
            let field = format!("{FIELD}[{i}]");
            let (name, data_type) = match pair {
                Value::Array(items) => match items.as_slice() {
                    [name, data_type] => (as_str(name, &field)?, data_type),
                    _ => return Err(wrong_type(&field, "a [name, data type] pair", pair)),
                },
                Value::Object(obj) => {
                    only_members(obj, &["name", "data_type"], &field)?;
                    let name = as_str(required(obj, "name", &format!("{field}.name"))?, &format!("{field}.name"))?;
                    (name, required(obj, "data_type", &format!("{field}.data_type"))?)
                }
                other => return Err(wrong_type(&field, "a field object or a [name, data type] pair", other)),
            };
            let data_type = DataType::from_json(data_type).map_err(|e| match e {
                MetadataError::Unsupported { name, .. } => {
                    MetadataError::Unsupported { field: field.clone(), kind: "data type", name }
                }
                other => other,
            })?;
            fields.push((name.to_owned(), data_type));
        }
        Ok(DataType::Structured(Arc::new(StructuredType::new(fields)?.with_spelling(spelling))))
    }

    pub(crate) fn to_json(&self) -> Value {
        let config = match self {
            DataType::FixedLengthUtf32 { length_bytes } | DataType::NullTerminatedBytes { length_bytes } => {
                serde_json::json!({ "length_bytes": length_bytes })
            }
            DataType::DateTime64 { unit, scale_factor } | DataType::TimeDelta64 { unit, scale_factor } => {
                serde_json::json!({ "unit": unit.name(), "scale_factor": scale_factor })
            }
            DataType::Structured(s) => {
                let fields: Vec<Value> = s
                    .fields
                    .iter()
                    .map(|(name, dt)| match s.spelling {
                        StructSpelling::Structured => Value::Array(vec![name.as_str().into(), dt.to_json()]),
                        StructSpelling::Struct => serde_json::json!({ "name": name, "data_type": dt.to_json() }),
                    })
                    .collect();
                serde_json::json!({ "fields": fields })
            }
            other => return Value::String(other.name()),
        };
        serde_json::json!({ "name": self.static_name(), "configuration": config })
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}
