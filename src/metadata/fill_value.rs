//! Fill values: parsed from every JSON form the spec allows (and the readings implementations
//! disagree on, see CODECS.md), stored as the element's little-endian bytes, written back in the
//! canonical form.

use half::{bf16, f16};
use serde_json::{Number, Value};

use super::base64;
use super::data_type::{DataType, StructSpelling, StructuredType};
use super::json::{invalid, wrong_type};
use crate::error::MetadataError;

const FIELD: &str = "fill_value";

/// The value of every element nobody has written; one element as little-endian bytes.
///
/// ```
/// use zarrdb::{DataType, FillValue};
/// let nan = FillValue::from_json(&serde_json::json!("NaN"), DataType::Float32).unwrap();
/// assert!(f32::from_le_bytes(nan.as_le_bytes().try_into().unwrap()).is_nan());
/// assert_eq!(FillValue::zero(DataType::Int16).as_le_bytes(), [0, 0]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FillValue {
    bytes: Vec<u8>,
}

impl FillValue {
    /// A fill value from its little-endian element bytes.
    pub fn from_le_bytes(bytes: Vec<u8>) -> FillValue {
        FillValue { bytes }
    }

    /// The element's little-endian bytes.
    pub fn as_le_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The default fill value of a data type: zero, false, or all-zero raw bytes.
    pub fn zero(data_type: DataType) -> FillValue {
        FillValue { bytes: vec![0; data_type.size()] }
    }

    /// Parse the `fill_value` member for `data_type`.
    ///
    /// ```
    /// use zarrdb::{DataType, FillValue};
    /// let nan = FillValue::from_json(&serde_json::json!("NaN"), DataType::Float32).unwrap();
    /// assert_eq!(nan.as_le_bytes(), &0x7fc0_0000u32.to_le_bytes());
    /// assert!(FillValue::from_json(&serde_json::json!(300), DataType::UInt8).is_err());
    /// ```
    pub fn from_json(value: &Value, data_type: DataType) -> Result<FillValue, MetadataError> {
        let bytes = match &data_type {
            DataType::Bool => match value {
                Value::Bool(b) => vec![u8::from(*b)],
                other => return Err(wrong_type(FIELD, "true or false", other)),
            },
            DataType::Int8 => int::<1>(value, -(1 << 7), (1 << 7) - 1)?,
            DataType::Int16 => int::<2>(value, -(1 << 15), (1 << 15) - 1)?,
            DataType::Int32 => int::<4>(value, -(1 << 31), (1 << 31) - 1)?,
            DataType::Int64 => int::<8>(value, i64::MIN.into(), i64::MAX.into())?,
            DataType::UInt8 => int::<1>(value, 0, u8::MAX.into())?,
            DataType::UInt16 => int::<2>(value, 0, u16::MAX.into())?,
            DataType::UInt32 => int::<4>(value, 0, u32::MAX.into())?,
            DataType::UInt64 => int::<8>(value, 0, u64::MAX.into())?,
            DataType::Float16 => float(value, FIELD, Float::F16)?,
            DataType::BFloat16 => float(value, FIELD, Float::BF16)?,
            DataType::Float32 => float(value, FIELD, Float::F32)?,
            DataType::Float64 => float(value, FIELD, Float::F64)?,
            DataType::Complex64 => complex(value, Float::F32)?,
            DataType::Complex128 => complex(value, Float::F64)?,
            DataType::Raw { bits } => raw(value, (*bits as usize) / 8)?,
            DataType::String => match value {
                Value::String(text) => text.as_bytes().to_vec(),
                other => return Err(wrong_type(FIELD, "a string", other)),
            },
            DataType::Bytes => base64_bytes(value, None)?,
            DataType::NullTerminatedBytes { length_bytes } => {
                let mut bytes = base64_bytes(value, Some(*length_bytes as usize))?;
                bytes.resize(*length_bytes as usize, 0);
                bytes
            }
            DataType::FixedLengthUtf32 { length_bytes } => utf32(value, *length_bytes as usize)?,
            DataType::DateTime64 { .. } | DataType::TimeDelta64 { .. } => match value {
                Value::String(s) if s == "NaT" => i64::MIN.to_le_bytes().to_vec(),
                other => int::<8>(other, i64::MIN.into(), i64::MAX.into())?,
            },
            // `structured`: the element's bytes in base64 (zarr-python 3.1); `struct`: an object
            // of the fields' fill values (zarr-python 3.4). Either spelling reads either form,
            // as zarr-python 3.4 does.
            DataType::Structured(s) => match value {
                Value::Object(members) => struct_fields(members, s)?,
                _ => {
                    let bytes = base64_bytes(value, Some(data_type.size()))?;
                    if bytes.len() != data_type.size() {
                        let fields = s.fields().len();
                        return Err(invalid(
                            FIELD,
                            format!(
                                "{} bytes for a structured type of {fields} fields and {} bytes",
                                bytes.len(),
                                data_type.size()
                            ),
                        ));
                    }
                    bytes
                }
            },
        };
        Ok(FillValue { bytes })
    }

    /// The canonical JSON form: numbers where exact, "NaN"/"Infinity"/"-Infinity", full-width hex
    /// for NaNs with other payloads, one integer per byte for raw types.
    pub fn to_json(&self, data_type: DataType) -> Value {
        let b = &self.bytes;
        match data_type {
            DataType::Bool => Value::Bool(b[0] != 0),
            DataType::Int8 => (b[0] as i8).into(),
            DataType::Int16 => i16::from_le_bytes([b[0], b[1]]).into(),
            DataType::Int32 => i32::from_le_bytes(b[..4].try_into().expect("4-byte fill")).into(),
            DataType::Int64 => i64::from_le_bytes(b[..8].try_into().expect("8-byte fill")).into(),
            DataType::UInt8 => b[0].into(),
            DataType::UInt16 => u16::from_le_bytes([b[0], b[1]]).into(),
            DataType::UInt32 => u32::from_le_bytes(b[..4].try_into().expect("4-byte fill")).into(),
            DataType::UInt64 => u64::from_le_bytes(b[..8].try_into().expect("8-byte fill")).into(),
            DataType::Float16 => float_to_json(b, Float::F16),
            DataType::BFloat16 => float_to_json(b, Float::BF16),
            DataType::Float32 => float_to_json(b, Float::F32),
            DataType::Float64 => float_to_json(b, Float::F64),
            DataType::Complex64 => {
                Value::Array(vec![float_to_json(&b[..4], Float::F32), float_to_json(&b[4..], Float::F32)])
            }
            DataType::Complex128 => {
                Value::Array(vec![float_to_json(&b[..8], Float::F64), float_to_json(&b[8..], Float::F64)])
            }
            DataType::Raw { .. } => Value::Array(b.iter().map(|&x| x.into()).collect()),
            // A fill value parsed for the type is UTF-8; anything else came from the public
            // byte constructor and is shown with replacement characters rather than refused.
            DataType::String => String::from_utf8_lossy(b).into_owned().into(),
            DataType::Bytes => base64::encode(b).into(),
            DataType::NullTerminatedBytes { .. } => {
                let end = b.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
                base64::encode(&b[..end]).into()
            }
            DataType::FixedLengthUtf32 { .. } => utf32_to_string(b).into(),
            DataType::DateTime64 { .. } | DataType::TimeDelta64 { .. } => {
                i64::from_le_bytes(b[..8].try_into().expect("8-byte fill")).into()
            }
            DataType::Structured(s) => match s.spelling() {
                StructSpelling::Structured => base64::encode(b).into(),
                StructSpelling::Struct => Value::Object(
                    s.offsets()
                        .map(|(name, dt, at)| {
                            let field = FillValue::from_le_bytes(b[at..at + dt.size()].to_vec());
                            (name.to_owned(), field.to_json(dt.clone()))
                        })
                        .collect(),
                ),
            },
        }
    }
}

/// A `struct` fill value: each field's fill value under its name. A missing field takes its
/// type's default, as zarr-python 3.4 reads it: NaT for a time type, zero for any other (a
/// nested record all zeros); a member naming no field is refused.
fn struct_fields(members: &serde_json::Map<String, Value>, s: &StructuredType) -> Result<Vec<u8>, MetadataError> {
    if let Some(unknown) = members.keys().find(|k| !s.fields().iter().any(|(name, _)| name == *k)) {
        return Err(invalid(FIELD, format!("\"{unknown}\" is not a field of the structured type")));
    }
    let mut bytes = Vec::new();
    for (name, dt, _) in s.offsets() {
        match members.get(name) {
            Some(value) => {
                let field = FillValue::from_json(value, dt.clone()).map_err(|e| within(e, name))?;
                bytes.extend_from_slice(field.as_le_bytes());
            }
            None if matches!(dt, DataType::DateTime64 { .. } | DataType::TimeDelta64 { .. }) => {
                bytes.extend_from_slice(&i64::MIN.to_le_bytes())
            }
            None => bytes.resize(bytes.len() + dt.size(), 0),
        }
    }
    Ok(bytes)
}

/// `e`, raised for a field's own fill value, naming the field (`fill_value.x`).
fn within(e: MetadataError, name: &str) -> MetadataError {
    let rename = |field: String| match field.strip_prefix(FIELD) {
        Some(rest) => format!("{FIELD}.{name}{rest}"),
        None => field,
    };
    match e {
        MetadataError::WrongType { field, expected, found } => {
            MetadataError::WrongType { field: rename(field), expected, found }
        }
        MetadataError::InvalidValue { field, reason } => MetadataError::InvalidValue { field: rename(field), reason },
        other => other,
    }
}

/// A byte-string fill value: standard base64, as zarr-python writes it; at most `max` bytes.
fn base64_bytes(value: &Value, max: Option<usize>) -> Result<Vec<u8>, MetadataError> {
    let Value::String(text) = value else {
        return Err(wrong_type(FIELD, "a base64 string", value));
    };
    let bytes = base64::decode(text).ok_or_else(|| invalid(FIELD, format!("\"{text}\" is not standard base64")))?;
    match max {
        Some(max) if bytes.len() > max => {
            Err(invalid(FIELD, format!("{} bytes do not fit an element of {max} bytes", bytes.len())))
        }
        _ => Ok(bytes),
    }
}

/// A `fixed_length_utf32` fill value: a string of at most `length_bytes / 4` characters, as
/// little-endian UTF-32 padded with zero code units.
fn utf32(value: &Value, length_bytes: usize) -> Result<Vec<u8>, MetadataError> {
    let Value::String(text) = value else {
        return Err(wrong_type(FIELD, "a string", value));
    };
    let units = text.chars().count();
    if units * 4 > length_bytes {
        return Err(invalid(FIELD, format!("{units} characters do not fit {} UTF-32 code units", length_bytes / 4)));
    }
    let mut bytes: Vec<u8> = text.chars().flat_map(|c| u32::from(c).to_le_bytes()).collect();
    bytes.resize(length_bytes, 0);
    Ok(bytes)
}

/// Little-endian UTF-32 up to the first zero code unit (NumPy's reading of `U{n}`); invalid code
/// points (never produced by parsing) become U+FFFD.
pub(crate) fn utf32_to_string(bytes: &[u8]) -> String {
    utf32_units(bytes).map(|u| char::from_u32(u).unwrap_or(char::REPLACEMENT_CHARACTER)).collect()
}

/// [`utf32_to_string`] refusing code points that are no character (stored data is untrusted).
pub(crate) fn utf32_to_string_checked(bytes: &[u8]) -> Result<String, String> {
    utf32_units(bytes)
        .map(|u| char::from_u32(u).ok_or_else(|| format!("UTF-32 code unit {u:#x} is not a character")))
        .collect()
}

fn utf32_units(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes.chunks_exact(4).map(|u| u32::from_le_bytes([u[0], u[1], u[2], u[3]])).take_while(|&u| u != 0)
}

/// An integer fill value: a JSON number without fraction or exponent, within `[min, max]`.
fn int<const N: usize>(value: &Value, min: i128, max: i128) -> Result<Vec<u8>, MetadataError> {
    let Value::Number(n) = value else {
        return Err(wrong_type(FIELD, "an integer", value));
    };
    // serde_json keeps integers written without fraction or exponent as i64/u64; anything else
    // ("1.0", "1e3") arrives as f64 and is refused as the spec demands.
    let v: i128 = match (n.as_i64(), n.as_u64()) {
        (Some(v), _) => v.into(),
        (None, Some(v)) => v.into(),
        _ => return Err(invalid(FIELD, format!("{n} is not an integer without fraction or exponent"))),
    };
    if v < min || v > max {
        return Err(invalid(FIELD, format!("{v} is out of range [{min}, {max}]")));
    }
    Ok(v.to_le_bytes()[..N].to_vec())
}

#[derive(Clone, Copy)]
enum Float {
    F16,
    BF16,
    F32,
    F64,
}

impl Float {
    fn width(self) -> usize {
        match self {
            Float::F16 | Float::BF16 => 2,
            Float::F32 => 4,
            Float::F64 => 8,
        }
    }

    /// The canonical NaN of the spec: sign 0, mantissa MSB 1, the rest 0.
    fn canonical_nan(self) -> u64 {
        match self {
            Float::F16 => 0x7e00,
            Float::BF16 => 0x7fc0,
            Float::F32 => 0x7fc0_0000,
            Float::F64 => 0x7ff8_0000_0000_0000,
        }
    }

    fn bits_from_f64(self, v: f64) -> u64 {
        match self {
            Float::F16 => f16::from_f64(v).to_bits().into(),
            Float::BF16 => bf16::from_f64(v).to_bits().into(),
            Float::F32 => (v as f32).to_bits().into(),
            Float::F64 => v.to_bits(),
        }
    }

    fn to_f64(self, bits: u64) -> f64 {
        match self {
            Float::F16 => f16::from_bits(bits as u16).to_f64(),
            Float::BF16 => bf16::from_bits(bits as u16).to_f64(),
            Float::F32 => f32::from_bits(bits as u32).into(),
            Float::F64 => f64::from_bits(bits),
        }
    }

    /// The shortest decimal that reads back to the same bits in this width.
    fn shortest_decimal(self, bits: u64) -> f64 {
        let text = match self {
            Float::F16 => f16::from_bits(bits as u16).to_f32().to_string(),
            Float::BF16 => bf16::from_bits(bits as u16).to_f32().to_string(),
            Float::F32 => f32::from_bits(bits as u32).to_string(),
            Float::F64 => return f64::from_bits(bits),
        };
        text.parse().unwrap_or_else(|_| self.to_f64(bits))
    }
}

fn float(value: &Value, field: &str, kind: Float) -> Result<Vec<u8>, MetadataError> {
    let bits = match value {
        Value::Number(n) => {
            let v = n.as_f64().ok_or_else(|| invalid(field, format!("{n} is not representable")))?;
            kind.bits_from_f64(v)
        }
        Value::String(s) => match s.as_str() {
            "NaN" => kind.canonical_nan(),
            "Infinity" => kind.bits_from_f64(f64::INFINITY),
            "-Infinity" => kind.bits_from_f64(f64::NEG_INFINITY),
            text => hex_bits(text, kind.width()).ok_or_else(|| {
                invalid(
                    field,
                    format!(
                        "\"{text}\" is not a number, \"NaN\", \"Infinity\", \"-Infinity\" or \"0x\" followed by at most {} hex digits",
                        2 * kind.width()
                    ),
                )
            })?,
        },
        other => return Err(wrong_type(field, "a number or a string", other)),
    };
    Ok(bits.to_le_bytes()[..kind.width()].to_vec())
}

/// `"0x..."` raw bits. Short forms ("0x0", as tensorstore accepts) are read too; more digits than
/// the width holds are refused.
fn hex_bits(text: &str, width: usize) -> Option<u64> {
    let digits = text.strip_prefix("0x")?;
    if digits.is_empty() || digits.len() > 2 * width || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

fn float_to_json(bytes: &[u8], kind: Float) -> Value {
    let mut buf = [0u8; 8];
    buf[..bytes.len()].copy_from_slice(bytes);
    let bits = u64::from_le_bytes(buf);
    let v = kind.to_f64(bits);
    if v.is_nan() {
        if bits == kind.canonical_nan() {
            "NaN".into()
        } else {
            format!("0x{:0width$x}", bits, width = 2 * kind.width()).into()
        }
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if bits == kind.bits_from_f64(-0.0) {
        // JSON numbers cannot be relied on to keep the sign of zero across parsers.
        format!("0x{:0width$x}", bits, width = 2 * kind.width()).into()
    } else {
        Number::from_f64(kind.shortest_decimal(bits)).map_or(Value::Null, Value::Number)
    }
}

fn complex(value: &Value, kind: Float) -> Result<Vec<u8>, MetadataError> {
    let parts = value.as_array().ok_or_else(|| wrong_type(FIELD, "a list of two floats", value))?;
    if parts.len() != 2 {
        return Err(invalid(FIELD, format!("a complex fill value has 2 parts, found {}", parts.len())));
    }
    let mut bytes = float(&parts[0], "fill_value[0]", kind)?;
    bytes.extend(float(&parts[1], "fill_value[1]", kind)?);
    Ok(bytes)
}

/// Raw types: one integer 0..=255 per byte (what implementations write; see CODECS.md).
fn raw(value: &Value, len: usize) -> Result<Vec<u8>, MetadataError> {
    let items = value.as_array().ok_or_else(|| wrong_type(FIELD, "a list of byte values", value))?;
    if items.len() != len {
        return Err(invalid(FIELD, format!("a raw fill value needs {len} byte values, found {}", items.len())));
    }
    items
        .iter()
        .map(|item| match item.as_u64() {
            Some(b) if b <= 255 => Ok(b as u8),
            _ => Err(invalid(FIELD, format!("{item} is not a byte value 0..=255"))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::FillValue;
    use crate::error::MetadataError;
    use crate::metadata::{DataType, StructSpelling};

    fn record(spelling: &str) -> DataType {
        let t = json!({"name": spelling, "configuration": {"fields": [
            {"name": "t", "data_type": {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}},
            {"name": "v", "data_type": "int16"}]}});
        DataType::from_json(&t).unwrap()
    }

    #[test]
    fn struct_fill_values_are_objects_of_the_fields_and_structured_ones_base64() {
        let t = record("struct");
        let DataType::Structured(s) = &t else { panic!("{t}") };
        assert_eq!(s.spelling(), StructSpelling::Struct);
        // An omitted field takes its type's default: NaT for a time, zero otherwise.
        let fill = FillValue::from_json(&json!({"v": -2}), t.clone()).unwrap();
        assert_eq!(fill.as_le_bytes(), [&i64::MIN.to_le_bytes()[..], &(-2i16).to_le_bytes()].concat());
        assert_eq!(fill.to_json(t.clone()), json!({"t": -9223372036854775808i64, "v": -2}));
        // The base64 form is read under either name; `structured` writes it back.
        let legacy = record("structured");
        let from_base64 = FillValue::from_json(&json!("AAAAAAAAAIA+AA=="), legacy.clone()).unwrap();
        assert_eq!(from_base64.as_le_bytes(), [&i64::MIN.to_le_bytes()[..], &62i16.to_le_bytes()].concat());
        assert_eq!(from_base64.to_json(legacy.clone()), json!("AAAAAAAAAIA+AA=="));
        assert_eq!(FillValue::from_json(&json!("AAAAAAAAAIA+AA=="), t.clone()).unwrap(), from_base64);
        assert_eq!(FillValue::from_json(&json!({"t": "NaT", "v": 62}), legacy).unwrap(), from_base64);
        // A member naming no field, or a field's value of the wrong type, names the field.
        let err = FillValue::from_json(&json!({"w": 1}), t.clone()).unwrap_err();
        assert!(matches!(&err, MetadataError::InvalidValue { field, .. } if field == "fill_value"), "{err}");
        let err = FillValue::from_json(&json!({"v": 1.5}), t).unwrap_err();
        assert!(matches!(&err, MetadataError::InvalidValue { field, .. } if field == "fill_value.v"), "{err}");
    }

    #[test]
    fn struct_types_are_written_back_under_the_name_they_were_read_with() {
        for (name, field) in
            [("struct", json!({"name": "v", "data_type": "int16"})), ("structured", json!(["v", "int16"]))]
        {
            let t = json!({"name": name, "configuration": {"fields": [field]}});
            assert_eq!(DataType::from_json(&t).unwrap().to_json(), t);
        }
        // The other field form is read under either name.
        let mixed = json!({"name": "struct", "configuration": {"fields": [["v", "int16"]]}});
        assert_eq!(
            DataType::from_json(&mixed).unwrap(),
            DataType::from_json(&json!({"name": "struct",
            "configuration": {"fields": [{"name": "v", "data_type": "int16"}]}}))
            .unwrap()
        );
        let bad = json!({"name": "struct", "configuration": {"fields": [{"name": "v", "type": "int16"}]}});
        assert!(DataType::from_json(&bad).is_err());
    }
}
