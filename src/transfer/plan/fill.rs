//! Fill values of the older layouts, read into the crate's [`FillValue`] so the v3 document is
//! written in its canonical form.

use serde_json::Value;

use super::PlanError;
use crate::metadata::json::{invalid, wrong_type};
use crate::metadata::{DataType, FillValue, Layout};

/// A v1 or v2 `fill_value`.
///
/// `null` ("no fill value": uninitialised chunks are undefined) becomes the data type's zero,
/// which is what zarr-python 3 reads for a v2 array with a null fill value; v3 has no undefined
/// fill. Raw (`|V<n>`) fill values are base64 strings of the element's bytes.
pub(crate) fn v2(value: &Value, data_type: DataType, key: &str) -> Result<FillValue, PlanError> {
    match (value, &data_type) {
        (Value::Null, _) => Ok(FillValue::zero(data_type.clone())),
        (Value::String(text), DataType::Raw { bits }) => {
            let bytes = crate::metadata::base64::decode(text)
                .ok_or_else(|| PlanError::metadata(key, invalid("fill_value", "not a base64 string")))?;
            if bytes.len() != *bits as usize / 8 {
                return Err(PlanError::metadata(
                    key,
                    invalid("fill_value", format!("{} bytes for a {}-byte raw type", bytes.len(), bits / 8)),
                ));
            }
            Ok(FillValue::from_le_bytes(bytes))
        }
        // zarr-python 2 gave object arrays the default fill value 0, which fills nothing: numcodecs'
        // object codecs never store it, and zarr-python 3 reads such chunks as empty items.
        (Value::Number(n), DataType::String | DataType::Bytes) if n.as_u64() == Some(0) => {
            Ok(FillValue::zero(data_type))
        }
        // NumPy turns a bool fill value of 0 or 1 into False or True.
        (Value::Number(n), DataType::Bool) if n.as_u64().is_some_and(|v| v <= 1) => {
            Ok(FillValue::from_le_bytes(vec![n.as_u64().unwrap_or(0) as u8]))
        }
        _ => FillValue::from_json(value, data_type).map_err(|e| PlanError::metadata(key, e)),
    }
}

/// A 2020-draft `fill_value`: as v2, plus `"+Infinity"` and `"0b"`/`"0x"` strings of the raw
/// bits for any scalar type.
pub(crate) fn draft(value: &Value, data_type: DataType, key: &str) -> Result<FillValue, PlanError> {
    let Value::String(text) = value else { return v2(value, data_type, key) };
    if text == "+Infinity" {
        return v2(&Value::from("Infinity"), data_type, key);
    }
    let width = data_type.size();
    let digits = match (text.get(..2), data_type.layout()) {
        (Some("0b"), Layout::Scalar(_) | Layout::Bytes) => Some((2, &text[2..])),
        (Some("0x"), Layout::Scalar(_) | Layout::Bytes) => Some((16, &text[2..])),
        _ => None,
    };
    let Some((radix, digits)) = digits else { return v2(value, data_type, key) };
    let max_digits = if radix == 2 { 8 * width } else { 2 * width };
    let bits = (width <= 8 && !digits.is_empty() && digits.len() <= max_digits)
        .then(|| u64::from_str_radix(digits, radix).ok())
        .flatten()
        .ok_or_else(|| {
            PlanError::metadata(key, invalid("fill_value", format!("\"{text}\" is not the bits of a {data_type}")))
        })?;
    if data_type == DataType::Bool && bits > 1 {
        return Err(PlanError::metadata(key, invalid("fill_value", format!("\"{text}\" is not 0 or 1"))));
    }
    Ok(FillValue::from_le_bytes(bits.to_le_bytes()[..width].to_vec()))
}

/// Attributes documents (`.zattrs`, v1 `attrs`) must be objects.
pub(crate) fn attributes(value: Value, key: &str) -> Result<serde_json::Map<String, Value>, PlanError> {
    match value {
        Value::Object(obj) => Ok(obj),
        other => Err(PlanError::metadata(key, wrong_type("(document)", "an object", &other))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{draft, v2};
    use crate::metadata::DataType;
    use crate::transfer::plan::PlanError;

    #[test]
    fn v2_fill_values() {
        let f = |v, dt| v2(&v, dt, "a/.zarray").unwrap().as_le_bytes().to_vec();
        assert_eq!(f(json!(null), DataType::Float64), vec![0; 8]);
        assert_eq!(f(json!("NaN"), DataType::Float32), 0x7fc0_0000u32.to_le_bytes());
        assert_eq!(f(json!("-Infinity"), DataType::Float32), f32::NEG_INFINITY.to_le_bytes());
        assert_eq!(f(json!(-7), DataType::Int16), (-7i16).to_le_bytes());
        assert_eq!(f(json!(1), DataType::Bool), [1]);
        assert_eq!(f(json!(null), DataType::String), b"");
        assert_eq!(f(json!(0), DataType::String), b"");
        assert_eq!(f(json!("n/a"), DataType::String), b"n/a");
        assert_eq!(f(json!("YWI="), DataType::NullTerminatedBytes { length_bytes: 3 }), b"ab\0");
        assert_eq!(f(json!("ab"), DataType::FixedLengthUtf32 { length_bytes: 12 }), b"a\0\0\0b\0\0\0\0\0\0\0");
        let ns = DataType::DateTime64 { unit: crate::metadata::TimeUnit::Nanosecond, scale_factor: 1 };
        assert_eq!(f(json!(-9223372036854775808i64), ns.clone()), i64::MIN.to_le_bytes());
        assert_eq!(f(json!("NaT"), ns), i64::MIN.to_le_bytes());
        assert_eq!(f(json!(true), DataType::Bool), [1]);
        assert_eq!(f(json!("AQID"), DataType::Raw { bits: 24 }), [1, 2, 3]);
        assert_eq!(
            f(json!([1.5, -2.0]), DataType::Complex64),
            [1.5f32.to_le_bytes(), (-2.0f32).to_le_bytes()].concat()
        );
        for (bad, dt) in [
            (json!("AQID"), DataType::Raw { bits: 16 }),
            (json!("??"), DataType::Raw { bits: 16 }),
            (json!(300), DataType::UInt8),
            (json!("x"), DataType::Float32),
            (json!(2), DataType::Bool),
        ] {
            assert!(matches!(v2(&bad, dt, "k"), Err(PlanError::InvalidMetadata { .. })), "{bad}");
        }
    }

    #[test]
    fn draft_fill_values() {
        let f = |v, dt| draft(&v, dt, "k").unwrap().as_le_bytes().to_vec();
        assert_eq!(f(json!("+Infinity"), DataType::Float64), f64::INFINITY.to_le_bytes());
        assert_eq!(f(json!("0x3f800000"), DataType::Float32), 1.0f32.to_le_bytes());
        assert_eq!(f(json!("0b0000000000000101"), DataType::Int16), 5i16.to_le_bytes());
        assert_eq!(f(json!(null), DataType::UInt8), [0]);
        assert!(draft(&json!("0x1ff"), DataType::UInt8, "k").is_err());
        assert!(draft(&json!("0b10"), DataType::Bool, "k").is_err());
    }
}
