//! Element types of the older layouts: NumPy type strings (Zarr v1 and v2, e.g. `"<f4"`,
//! `"|b1"`, `">i8"`, `"|V6"`, `"<U4"`, `"|S3"`, `"<M8[ns]"`, and `"|O"` with its object codec)
//! and the 2020 draft's names (`"bool"`, `"u1"`, `"<i8"`, `"r16"`).

use serde_json::Value;

use super::PlanError;
use crate::metadata::json::describe;
use crate::metadata::{DataType, TimeUnit};

/// Byte order of a multi-byte element as stored, which becomes the `bytes` codec's `endian`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Endian {
    Little,
    Big,
}

impl Endian {
    /// The same byte order in the Rust API's typed codecs.
    pub fn typed(self) -> crate::metadata::Endian {
        match self {
            Endian::Little => crate::metadata::Endian::Little,
            Endian::Big => crate::metadata::Endian::Big,
        }
    }
}

/// A converted element type; `endian` is `None` where byte order means nothing (one-byte types,
/// raw bytes), so the `bytes` codec is written without it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dtype {
    pub data_type: DataType,
    pub endian: Option<Endian>,
}

/// The widest raw type the crate's data types accept (`r<bits>` up to 2^20 bits).
const MAX_RAW_BYTES: u64 = (1 << 20) / 8;

/// The widest text or byte-string element the crate's data types accept.
const MAX_ELEMENT_BYTES: u64 = MAX_RAW_BYTES;

/// A NumPy time type string, `<M8[10s]`, `>m8[ns]`, `<M8` (generic): `None` when `text` is not
/// one at all, `Some(Err)` when it is a malformed one.
fn time_type(text: &str) -> Option<Result<Dtype, ()>> {
    let (order, rest) = text.split_at_checked(1)?;
    let (kind, rest) = rest.split_at_checked(1)?;
    if !matches!(kind, "M" | "m") {
        return None;
    }
    Some((|| {
        let endian = match order {
            "<" => Endian::Little,
            ">" => Endian::Big,
            _ => return Err(()),
        };
        let unit_part = rest.strip_prefix('8').ok_or(())?;
        let (unit, scale_factor) = if unit_part.is_empty() {
            (TimeUnit::Generic, 1)
        } else {
            let inner = unit_part.strip_prefix('[').and_then(|u| u.strip_suffix(']')).ok_or(())?;
            let digits = inner.len() - inner.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let (scale, unit) = inner.split_at(digits);
            let scale: u32 = if scale.is_empty() { 1 } else { scale.parse().map_err(|_| ())? };
            if scale == 0 || scale >= 1 << 31 || inner.starts_with('0') {
                return Err(());
            }
            (TimeUnit::from_name(unit).ok_or(())?, scale)
        };
        let data_type = if kind == "M" {
            DataType::DateTime64 { unit, scale_factor }
        } else {
            DataType::TimeDelta64 { unit, scale_factor }
        };
        Ok(Dtype { data_type, endian: Some(endian) })
    })())
}

/// The object codecs of Zarr v2 that turn an object (`|O`) array into bytes: the first filter of
/// such an array.
pub(crate) const OBJECT_CODECS: [&str; 5] = ["vlen-utf8", "vlen-bytes", "vlen-array", "json2", "pickle"];

/// The object codec of a v2 array: the `id` of its first filter when that is one of
/// [`OBJECT_CODECS`].
pub(crate) fn object_codec(filters: Option<&Value>) -> Option<&str> {
    let id = filters?.as_array()?.first()?.get("id")?.as_str()?;
    OBJECT_CODECS.contains(&id).then_some(id)
}

/// The filters of a v2 array that follow its object codec (which becomes the v3 array -> bytes
/// codec).
pub(crate) fn after_object_codec(filters: Option<&Value>) -> Option<Value> {
    let list = filters?.as_array()?;
    Some(Value::Array(list.get(1..).unwrap_or_default().to_vec()))
}

/// A v1 or v2 `dtype` member; an object dtype (`|O`) takes its meaning from `object_codec`
/// (`vlen-utf8` text, `vlen-bytes` byte strings). Structured (list) dtypes and objects in other
/// codecs are refused.
pub(crate) fn from_numpy(value: &Value, object_codec: Option<&str>, key: &str) -> Result<Dtype, PlanError> {
    let text = match value {
        Value::String(s) => s.as_str(),
        Value::Array(fields) => return structured(fields, key),
        other => {
            return Err(PlanError::metadata(key, crate::metadata::json::wrong_type("dtype", "a string", other)));
        }
    };
    if text == "|O" || text == "|O8" || text == "<O" || text == ">O" {
        return match object_codec {
            Some("vlen-utf8") => Ok(Dtype { data_type: DataType::String, endian: None }),
            Some("vlen-bytes") => Ok(Dtype { data_type: DataType::Bytes, endian: None }),
            Some(other) => Err(PlanError::unsupported(
                key,
                "filters",
                format!("\"{other}\""),
                "object arrays are read with the vlen-utf8 or vlen-bytes object codec only",
            )),
            None => Err(PlanError::unsupported(
                key,
                "dtype",
                format!("\"{text}\""),
                "an object dtype needs an object codec (vlen-utf8 or vlen-bytes) as its first filter",
            )),
        };
    }
    typestr(text, key, "dtype")
}

/// The NumPy type string of `data_type` as a `.npy` header or a v2 `dtype` spells it, always
/// little-endian (`"<f4"`, `"|b1"`, `"<M8[10s]"`, `"<U4"`), or for a structured type the list of
/// `[name, type string]` pairs; `Err` says why a type has none.
pub(crate) fn to_numpy(data_type: &DataType) -> Result<Value, &'static str> {
    let text = match data_type {
        DataType::Bool => "|b1".to_owned(),
        DataType::Int8 => "|i1".to_owned(),
        DataType::UInt8 => "|u1".to_owned(),
        DataType::Int16 => "<i2".to_owned(),
        DataType::Int32 => "<i4".to_owned(),
        DataType::Int64 => "<i8".to_owned(),
        DataType::UInt16 => "<u2".to_owned(),
        DataType::UInt32 => "<u4".to_owned(),
        DataType::UInt64 => "<u8".to_owned(),
        DataType::Float16 => "<f2".to_owned(),
        DataType::Float32 => "<f4".to_owned(),
        DataType::Float64 => "<f8".to_owned(),
        DataType::Complex64 => "<c8".to_owned(),
        DataType::Complex128 => "<c16".to_owned(),
        DataType::Raw { bits } => format!("|V{}", bits / 8),
        DataType::FixedLengthUtf32 { length_bytes } => format!("<U{}", length_bytes / 4),
        DataType::NullTerminatedBytes { length_bytes } => format!("|S{length_bytes}"),
        DataType::DateTime64 { unit, scale_factor } => time_string('M', *unit, *scale_factor),
        DataType::TimeDelta64 { unit, scale_factor } => time_string('m', *unit, *scale_factor),
        DataType::Structured(s) => {
            let fields: Result<Vec<Value>, _> = s
                .fields()
                .iter()
                .map(|(name, field)| Ok(Value::Array(vec![name.as_str().into(), to_numpy(field)?])))
                .collect();
            return fields.map(Value::Array);
        }
        DataType::BFloat16 => return Err("NumPy has no bfloat16 type"),
        DataType::String | DataType::Bytes => {
            return Err("variable-length items are NumPy objects, which a .npy file holds only pickled")
        }
    };
    Ok(Value::String(text))
}

fn time_string(kind: char, unit: TimeUnit, scale_factor: u32) -> String {
    match (unit, scale_factor) {
        (TimeUnit::Generic, _) => format!("<{kind}8"),
        (unit, 1) => format!("<{kind}8[{unit}]"),
        (unit, n) => format!("<{kind}8[{n}{unit}]"),
    }
}

/// A structured dtype, `[[name, type string], ...]`: zarr-python's `structured` data type, its
/// fields stored little-endian one after the other. Subarray fields (`[name, type, shape]`),
/// nested records and big-endian fields are refused: the v3 type keeps none of them.
fn structured(fields: &[Value], key: &str) -> Result<Dtype, PlanError> {
    let refuse = |why: String| PlanError::unsupported(key, "dtype", "a structured dtype", why);
    let mut out = Vec::with_capacity(fields.len().min(1024));
    for (i, field) in fields.iter().enumerate() {
        let (name, text) = match field.as_array().map(Vec::as_slice) {
            Some([Value::String(name), Value::String(text)]) => (name, text),
            _ => return Err(refuse(format!("field {i} is not a [name, type string] pair"))),
        };
        let dtype = typestr(text, key, "dtype")?;
        if dtype.endian == Some(Endian::Big) {
            return Err(refuse(format!("field \"{name}\" is big-endian ({text})")));
        }
        out.push((name.clone(), dtype.data_type));
    }
    let structured = crate::metadata::StructuredType::new(out).map_err(|e| PlanError::metadata(key, e))?;
    Ok(Dtype { data_type: DataType::Structured(std::sync::Arc::new(structured)), endian: None })
}

/// A draft `data_type`: the draft's own names, or the NumPy-style names it shares with v2.
pub(crate) fn from_draft(value: &Value, key: &str) -> Result<Dtype, PlanError> {
    let text = match value {
        Value::String(s) => s.as_str(),
        Value::Object(obj) => {
            let name = obj.get("extension").map_or_else(|| describe(value), describe);
            return Err(PlanError::unsupported(
                key,
                "data_type",
                name,
                "extension data types are not converted (their fallback would lose what the values mean)",
            ));
        }
        other => {
            return Err(PlanError::metadata(key, crate::metadata::json::wrong_type("data_type", "a string", other)));
        }
    };
    let one_byte = |data_type| Ok(Dtype { data_type, endian: None });
    match text {
        "bool" => one_byte(DataType::Bool),
        "i1" => one_byte(DataType::Int8),
        "u1" => one_byte(DataType::UInt8),
        raw if raw.starts_with('r') => {
            let bits = raw[1..]
                .parse::<u64>()
                .ok()
                .filter(|b| *b > 0 && b % 8 == 0 && b / 8 <= MAX_RAW_BYTES && !raw[1..].starts_with(['0', '+']))
                .ok_or_else(|| {
                    PlanError::unsupported(
                        key,
                        "data_type",
                        describe(value),
                        "not a raw type r<bits>, bits a multiple of 8",
                    )
                })?;
            one_byte(DataType::Raw { bits: bits as u32 })
        }
        other => typestr(other, key, "data_type"),
    }
}

fn typestr(text: &str, key: &str, field: &str) -> Result<Dtype, PlanError> {
    let refuse = |reason: &str| PlanError::unsupported(key, field, format!("\"{text}\""), reason);
    if let Some(time) = time_type(text) {
        return time.map_err(|()| refuse("not a NumPy datetime64/timedelta64 type string (e.g. \"<M8[ns]\")"));
    }
    let mut chars = text.chars();
    let (Some(order), Some(kind)) = (chars.next(), chars.next()) else {
        return Err(refuse("not a NumPy type string (byte order, kind, size)"));
    };
    let digits = chars.as_str();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
        return Err(refuse("not a NumPy type string (byte order, kind, size)"));
    }
    let size: u64 = digits.parse().map_err(|_| refuse("the size is too large"))?;
    let endian = match order {
        '<' => Some(Endian::Little),
        '>' => Some(Endian::Big),
        '|' => None,
        _ => return Err(refuse("the byte order must be '<', '>' or '|'")),
    };
    let data_type = match (kind, size) {
        ('b', 1) => DataType::Bool,
        ('i', 1) => DataType::Int8,
        ('i', 2) => DataType::Int16,
        ('i', 4) => DataType::Int32,
        ('i', 8) => DataType::Int64,
        ('u', 1) => DataType::UInt8,
        ('u', 2) => DataType::UInt16,
        ('u', 4) => DataType::UInt32,
        ('u', 8) => DataType::UInt64,
        ('f', 2) => DataType::Float16,
        ('f', 4) => DataType::Float32,
        ('f', 8) => DataType::Float64,
        ('c', 8) => DataType::Complex64,
        ('c', 16) => DataType::Complex128,
        ('V', n) if n <= MAX_RAW_BYTES => DataType::Raw { bits: (n * 8) as u32 },
        ('V', _) => return Err(refuse("raw types wider than 2^20 bits are not supported")),
        ('S', n) if n <= MAX_ELEMENT_BYTES => DataType::NullTerminatedBytes { length_bytes: n as u32 },
        ('U', n) if n <= MAX_ELEMENT_BYTES / 4 => DataType::FixedLengthUtf32 { length_bytes: n as u32 * 4 },
        ('S' | 'U', _) => return Err(refuse("string types wider than 128 KiB are not supported")),
        ('O', _) => return Err(refuse("an object dtype needs an object codec")),
        _ => return Err(refuse("no Zarr v3 data type has this kind and size")),
    };
    let endian = match data_type.layout() {
        crate::metadata::Layout::Bytes => None,
        _ => Some(endian.ok_or_else(|| refuse("a multi-byte type needs the byte order '<' or '>'"))?),
    };
    Ok(Dtype { data_type, endian })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{from_draft, from_numpy, Dtype, Endian};
    use crate::metadata::{DataType, TimeUnit};
    use crate::transfer::plan::PlanError;

    fn ok(text: &str) -> Dtype {
        from_numpy(&json!(text), None, "a/.zarray").unwrap()
    }

    #[test]
    fn numpy_type_strings() {
        let le = Some(Endian::Little);
        assert_eq!(ok("|b1"), Dtype { data_type: DataType::Bool, endian: None });
        assert_eq!(ok("|i1"), Dtype { data_type: DataType::Int8, endian: None });
        assert_eq!(ok("<u1"), Dtype { data_type: DataType::UInt8, endian: None });
        assert_eq!(ok("<i2"), Dtype { data_type: DataType::Int16, endian: le });
        assert_eq!(ok(">u8"), Dtype { data_type: DataType::UInt64, endian: Some(Endian::Big) });
        assert_eq!(ok("<f2"), Dtype { data_type: DataType::Float16, endian: le });
        assert_eq!(ok(">f8"), Dtype { data_type: DataType::Float64, endian: Some(Endian::Big) });
        assert_eq!(ok("<c8"), Dtype { data_type: DataType::Complex64, endian: le });
        assert_eq!(ok("<c16"), Dtype { data_type: DataType::Complex128, endian: le });
        assert_eq!(ok("|V6"), Dtype { data_type: DataType::Raw { bits: 48 }, endian: None });
        assert_eq!(ok("|S3"), Dtype { data_type: DataType::NullTerminatedBytes { length_bytes: 3 }, endian: None });
        assert_eq!(
            ok(">U2"),
            Dtype { data_type: DataType::FixedLengthUtf32 { length_bytes: 8 }, endian: Some(Endian::Big) }
        );
        let time = |unit, scale_factor| DataType::DateTime64 { unit, scale_factor };
        assert_eq!(ok("<M8[ns]"), Dtype { data_type: time(TimeUnit::Nanosecond, 1), endian: le });
        assert_eq!(ok(">M8[10s]"), Dtype { data_type: time(TimeUnit::Second, 10), endian: Some(Endian::Big) });
        assert_eq!(ok("<M8"), Dtype { data_type: time(TimeUnit::Generic, 1), endian: le });
        assert_eq!(
            ok("<m8[us]"),
            Dtype { data_type: DataType::TimeDelta64 { unit: TimeUnit::Microsecond, scale_factor: 1 }, endian: le }
        );
        let object = |codec| from_numpy(&json!("|O"), Some(codec), "k").unwrap().data_type;
        assert_eq!(object("vlen-utf8"), DataType::String);
        assert_eq!(object("vlen-bytes"), DataType::Bytes);
    }

    #[test]
    fn unsupported_numpy_types_name_the_key_and_field() {
        for bad in [
            json!("|O"),
            json!("|O8"),
            json!("<M8[xs]"),
            json!("|M8[ns]"),
            json!("<M8[0s]"),
            json!("<M8[ns"),
            json!("<m4[s]"),
            json!("<m8[2147483648s]"),
            json!("|S999999999"),
            json!("<f16"),
            json!("|i4"),
            json!("=i4"),
            json!("<i04"),
            json!("<"),
            json!(""),
            json!("<i99999999999999999999999"),
            json!("|V999999999"),
            json!([["r", ">i2"], ["g", "|u1"]]),
            json!([["r", "<i2", [2]]]),
        ] {
            match from_numpy(&bad, None, "a/.zarray") {
                Err(PlanError::Unsupported { key, field, .. }) => {
                    assert_eq!((key.as_str(), field.as_str()), ("a/.zarray", "dtype"), "{bad}")
                }
                other => panic!("{bad}: expected Unsupported, got {other:?}"),
            }
        }
        assert!(matches!(from_numpy(&json!(4), None, "k"), Err(PlanError::InvalidMetadata { .. })));
        for bad in [json!([["r", "<i2"], ["r", "<i2"]]), json!([])] {
            assert!(matches!(from_numpy(&bad, None, "k"), Err(PlanError::InvalidMetadata { .. })), "{bad}");
        }
        let record = from_numpy(&json!([["r", "<i2"], ["g", "|u1"]]), None, "k").unwrap().data_type;
        assert_eq!((record.size(), record.name()), (3, "structured{r: int16, g: uint8}".to_owned()));
        assert!(matches!(from_numpy(&json!("|O"), Some("pickle"), "k"), Err(PlanError::Unsupported { .. })));
    }

    #[test]
    fn draft_names() {
        let d = |text: &str| from_draft(&json!(text), "meta/root/a.array.json");
        assert_eq!(d("bool").unwrap().data_type, DataType::Bool);
        assert_eq!(d("i1").unwrap().data_type, DataType::Int8);
        assert_eq!(d("u1").unwrap().data_type, DataType::UInt8);
        assert_eq!(d(">i4").unwrap(), Dtype { data_type: DataType::Int32, endian: Some(Endian::Big) });
        assert_eq!(d("r24").unwrap(), Dtype { data_type: DataType::Raw { bits: 24 }, endian: None });
        for bad in ["r12", "r0", "r", "r08", "float32", "<i3"] {
            assert!(matches!(d(bad), Err(PlanError::Unsupported { .. })), "{bad}");
        }
        let ext = json!({"extension": "https://purl.org/zarr/spec/protocol/extensions/datetime-dtypes/1.0",
                         "type": "<M8[ns]", "fallback": "<i8"});
        assert!(matches!(from_draft(&ext, "k"), Err(PlanError::Unsupported { .. })));
    }
}
