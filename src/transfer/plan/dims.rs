//! xarray's dimension names. In Zarr v2, xarray keeps them in the attribute `_ARRAY_DIMENSIONS`
//! (one string per dimension); in v3 they are the array's `dimension_names`, and xarray requires
//! them there. So a converted array gets them as `dimension_names`, and the attribute goes: left
//! in place, xarray would show it as a variable attribute after a round trip.

use serde_json::Value;

use super::convert::ArraySpec;

/// The v2 attribute xarray writes.
pub(super) const ATTRIBUTE: &str = "_ARRAY_DIMENSIONS";

/// Move `_ARRAY_DIMENSIONS` from the attributes to `dimension_names`. An attribute that is not
/// one string per dimension is left as it is, with no dimension names, and the reason is
/// returned for the import report: the array stays readable, and nothing is guessed.
pub(super) fn take(spec: &mut ArraySpec) -> Option<String> {
    let value = spec.attributes.get(ATTRIBUTE)?;
    let rank = spec.shape.len();
    let names = match value {
        Value::Array(list) if list.len() == rank => {
            list.iter().map(|v| v.as_str().map(|s| Some(s.to_owned()))).collect::<Option<Vec<_>>>()
        }
        _ => None,
    };
    let Some(names) = names else {
        let found = match value {
            Value::Array(list) => format!("a list of {} values", list.len()),
            other => crate::metadata::json::describe(other),
        };
        return Some(format!(
            "attribute {ATTRIBUTE} = {found} is not a list of {rank} strings: kept as an attribute, no dimension_names set"
        ));
    };
    spec.attributes.remove(ATTRIBUTE);
    spec.dimension_names = Some(names);
    None
}

/// The attribute xarray reads a v3 array's missing-value marker from.
const FILL_ATTRIBUTE: &str = "_FillValue";

/// Keep what an xarray dataset means by its v2 fill value. xarray reads a v2 array's
/// `fill_value` as the CF `_FillValue` (elements equal to it are missing), but a v3 array's
/// `fill_value` as no such thing: there it reads only the `_FillValue` attribute. So an array
/// xarray wrote (it has `_ARRAY_DIMENSIONS`) with a fill value gets that attribute, in xarray's
/// own encoding, unless it already has one; otherwise a packed `int16` variable's -32768 would
/// read as data after a conversion.
pub(super) fn keep_fill_as_mask(spec: &mut ArraySpec, v2_fill: &Value) {
    use crate::metadata::DataType;
    if v2_fill.is_null() || spec.attributes.contains_key(FILL_ATTRIBUTE) {
        return;
    }
    let bytes = spec.fill_value.as_le_bytes();
    let float = |b: &[u8]| -> Option<f64> {
        Some(match b.len() {
            2 => half::f16::from_le_bytes([b[0], b[1]]).to_f64(),
            4 => f32::from_le_bytes(b.try_into().ok()?).into(),
            8 => f64::from_le_bytes(b.try_into().ok()?),
            _ => return None,
        })
    };
    // xarray's FillValueCoder: integers and booleans as JSON, floats as base64 of a little-endian
    // float64, byte strings as base64, text as itself.
    let data_type = &spec.dtype.data_type;
    let encoded = match data_type {
        DataType::Bool => Value::Bool(bytes.first().is_some_and(|&b| b != 0)),
        float_type if float_type.is_float() => match float(bytes) {
            Some(v) => crate::metadata::base64::encode(&v.to_le_bytes()).into(),
            None => return,
        },
        DataType::FixedLengthUtf32 { .. } | DataType::NullTerminatedBytes { .. } | DataType::String => {
            spec.fill_value.to_json(data_type.clone())
        }
        integer if integer.is_integer() => spec.fill_value.to_json(data_type.clone()),
        _ => return,
    };
    spec.attributes.insert(FILL_ATTRIBUTE.to_owned(), encoded);
}
