//! Text renderings shared by the commands.

use serde_json::Value;
use zarrdb::{Array, DataType, FillValue};

/// `[10, 20]` for a shape.
pub(crate) fn shape(dims: &[u64]) -> String {
    format!("[{}]", dims.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
}

/// The codec names of an array, e.g. `bytes`.
pub(crate) fn codecs(array: &Array) -> String {
    array.metadata().codecs.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// One element as JSON, in the notation of `fill_value` (so NaN and infinities are strings).
pub(crate) fn element(bytes: &[u8], data_type: DataType) -> Value {
    FillValue::from_le_bytes(bytes.to_vec()).to_json(data_type)
}
