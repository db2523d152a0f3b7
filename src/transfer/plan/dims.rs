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
