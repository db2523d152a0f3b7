//! Text renderings shared by the commands.

use serde_json::Value;
use zarrdb::metadata::TimeUnit;
use zarrdb::{Array, DataType, FillValue};

/// `[10, 20]` for a shape.
pub(crate) fn shape(dims: &[u64]) -> String {
    format!("[{}]", dims.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
}

/// The codec names of an array, e.g. `bytes`.
/// The product of `factors` as JSON: a number when it fits in a u64, else its exact decimal
/// digits as a string (shapes of up to 2^64 - 1 per dimension multiply far past u128).
pub(crate) fn product(factors: impl IntoIterator<Item = u64>) -> Value {
    // Little-endian limbs of base 10^9: exact for any rank, with no overflow.
    const BASE: u64 = 1_000_000_000;
    let mut limbs: Vec<u64> = vec![1];
    for factor in factors {
        let (high, low) = (factor / BASE, factor % BASE);
        // limbs * factor = limbs * low + (limbs * high) shifted one limb.
        let mut out = vec![0u64; limbs.len() + 3];
        for (shift, part) in [(0, low), (1, high)] {
            let mut carry = 0u128;
            for (i, &limb) in limbs.iter().enumerate() {
                let v = out[i + shift] as u128 + limb as u128 * part as u128 + carry;
                out[i + shift] = (v % BASE as u128) as u64;
                carry = v / BASE as u128;
            }
            let mut i = limbs.len() + shift;
            while carry > 0 {
                let v = out[i] as u128 + carry;
                out[i] = (v % BASE as u128) as u64;
                carry = v / BASE as u128;
                i += 1;
            }
        }
        while out.len() > 1 && out.last() == Some(&0) {
            out.pop();
        }
        limbs = out;
    }
    let mut digits = limbs.last().map_or_else(String::new, u64::to_string);
    for limb in limbs.iter().rev().skip(1) {
        digits.push_str(&format!("{limb:09}"));
    }
    match digits.parse::<u64>() {
        Ok(n) => Value::from(n),
        Err(_) => Value::String(digits),
    }
}

/// How an array is chunked, as a JSON member: `chunk_shape` of a regular grid, or `chunk_shapes`
/// (the edges of each dimension, as `zarr.json` holds them) of a rectilinear one.
pub(crate) fn chunks(array: &Array) -> (&'static str, Value) {
    if array.metadata().is_regular() {
        return ("chunk_shape", array.chunk_shape().into());
    }
    ("chunk_shapes", array.metadata().to_json()["chunk_grid"]["configuration"]["chunk_shapes"].clone())
}

/// [`chunks`] for people: `[2, 2]`, or `rectilinear [[[2, 3], 1], 4]`.
pub(crate) fn chunks_text(array: &Array) -> String {
    match chunks(array) {
        ("chunk_shape", _) => shape(array.chunk_shape()),
        (_, edges) => format!("rectilinear {edges}"),
    }
}

pub(crate) fn codecs(array: &Array) -> String {
    array.metadata().codecs.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// One element as JSON, in the notation of `fill_value` (so NaN and infinities are strings),
/// except where that notation is not for people: byte strings show as text (see [`bytes_item`])
/// and datetimes as ISO 8601 (see [`datetime`]).
pub(crate) fn element(bytes: &[u8], data_type: DataType) -> Value {
    match data_type {
        DataType::NullTerminatedBytes { .. } => {
            let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            bytes_item(&bytes[..end])
        }
        DataType::DateTime64 { unit, scale_factor } => {
            let ticks = i64::from_le_bytes(bytes[..8].try_into().unwrap_or([0; 8]));
            datetime(ticks, unit, scale_factor)
        }
        DataType::TimeDelta64 { .. } if bytes[..8] == i64::MIN.to_le_bytes() => "NaT".into(),
        // A record prints as an object of its fields, each in its own notation.
        DataType::Structured(s) => s
            .offsets()
            .map(|(name, dt, at)| (name.to_owned(), element(&bytes[at..at + dt.size()], dt.clone())))
            .collect::<serde_json::Map<String, Value>>()
            .into(),
        _ => FillValue::from_le_bytes(bytes.to_vec()).to_json(data_type),
    }
}

/// A byte string: a JSON string when it is UTF-8, `{"base64": "..."}` otherwise, so the two can
/// never be confused.
pub(crate) fn bytes_item(bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.into(),
        Err(_) => {
            let meta = FillValue::from_le_bytes(bytes.to_vec()).to_json(DataType::Bytes);
            serde_json::json!({ "base64": meta })
        }
    }
}

/// A `datetime64` value as ISO 8601 text in its own unit ("2001-01-01T06:00:00"), "NaT", or the
/// bare tick count where it has no calendar reading (generic unit, or beyond the years ±262,000).
pub(crate) fn datetime(ticks: i64, unit: TimeUnit, scale_factor: u32) -> Value {
    if ticks == i64::MIN {
        return "NaT".into();
    }
    let Some(n) = i128::from(ticks).checked_mul(i128::from(scale_factor)) else { return ticks.into() };
    // (seconds per unit, or a calendar unit), fractional digits shown
    let text = match unit {
        TimeUnit::Year => Some(format!("{}", 1970 + n)),
        TimeUnit::Month => {
            let (y, m) = (1970 + n.div_euclid(12), n.rem_euclid(12) + 1);
            Some(format!("{y}-{m:02}"))
        }
        TimeUnit::Week => civil(n * 7 * 86_400, 0, 0).map(|t| t[..10].to_owned()),
        TimeUnit::Day => civil(n * 86_400, 0, 0).map(|t| t[..10].to_owned()),
        TimeUnit::Hour => civil(n * 3_600, 0, 0),
        TimeUnit::Minute => civil(n * 60, 0, 0),
        TimeUnit::Second => civil(n, 0, 0),
        TimeUnit::Millisecond => civil(n.div_euclid(1_000), n.rem_euclid(1_000), 3),
        TimeUnit::Microsecond => civil(n.div_euclid(1_000_000), n.rem_euclid(1_000_000), 6),
        TimeUnit::Nanosecond => civil(n.div_euclid(1_000_000_000), n.rem_euclid(1_000_000_000), 9),
        TimeUnit::Picosecond => civil(n.div_euclid(10i128.pow(12)), n.rem_euclid(10i128.pow(12)), 12),
        TimeUnit::Femtosecond => civil(n.div_euclid(10i128.pow(15)), n.rem_euclid(10i128.pow(15)), 15),
        TimeUnit::Attosecond => civil(n.div_euclid(10i128.pow(18)), n.rem_euclid(10i128.pow(18)), 18),
        _ => None,
    };
    text.map_or_else(|| ticks.into(), Value::from)
}

/// `seconds` since 1970-01-01T00:00:00 plus a fraction of `digits` digits, proleptic Gregorian
/// (the civil-from-days algorithm); `None` outside the years ±262,000.
fn civil(seconds: i128, fraction: i128, digits: usize) -> Option<String> {
    const LIMIT: i128 = 262_000 * 366 * 86_400;
    if !(-LIMIT..=LIMIT).contains(&seconds) {
        return None;
    }
    let (days, secs) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i128::from(month <= 2);
    let mut text = format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}", secs / 3_600, secs / 60 % 60, secs % 60);
    if digits > 0 {
        text.push_str(&format!(".{fraction:0digits$}"));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use zarrdb::metadata::TimeUnit;

    use super::{datetime, product};

    #[test]
    fn datetimes_read_as_numpy_prints_them() {
        let d = |ticks, unit, scale| datetime(ticks, unit, scale).as_str().map(str::to_owned);
        assert_eq!(d(0, TimeUnit::Second, 1).unwrap(), "1970-01-01T00:00:00");
        assert_eq!(d(978_307_200, TimeUnit::Second, 1).unwrap(), "2001-01-01T00:00:00");
        assert_eq!(d(-1, TimeUnit::Nanosecond, 1).unwrap(), "1969-12-31T23:59:59.999999999");
        assert_eq!(d(11_017, TimeUnit::Day, 1).unwrap(), "2000-03-01");
        assert_eq!(d(1, TimeUnit::Hour, 6).unwrap(), "1970-01-01T06:00:00");
        assert_eq!(d(13, TimeUnit::Month, 1).unwrap(), "1971-02");
        assert_eq!(d(i64::MIN, TimeUnit::Nanosecond, 1).unwrap(), "NaT");
        assert_eq!(datetime(i64::MAX, TimeUnit::Day, 1), serde_json::json!(i64::MAX), "beyond the calendar");
        assert_eq!(datetime(5, TimeUnit::Generic, 1), serde_json::json!(5));
    }

    #[test]
    fn products_are_exact_at_any_size() {
        assert_eq!(product([]), json!(1));
        assert_eq!(product([3, 4, 0]), json!(0));
        assert_eq!(product([u64::MAX, 1]), json!(u64::MAX));
        assert_eq!(product([u64::MAX, 2]), json!("36893488147419103230"));
        assert_eq!(product([1 << 32, 1 << 32]), json!("18446744073709551616"));
        let cube = (u64::MAX as u128 * u64::MAX as u128).to_string();
        assert_eq!(product([u64::MAX, u64::MAX]), json!(cube));
        assert_eq!(product([1_000_000_000, 1_000_000_000, 7]), json!(7_000_000_000_000_000_000u64));
    }
}
