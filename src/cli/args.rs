//! Values given on the command line: shapes (`100,200`) and JSON that may be written bare
//! (`--set units=kelvin`).

use serde_json::Value;

use super::CliError;

/// A shape or chunk shape, `100,200` (or `[100, 200]`); empty for a 0-dimensional array.
/// `option` names the flag in errors.
pub(crate) fn shape(option: &str, text: &str) -> Result<Vec<u64>, CliError> {
    let inner = text.trim().trim_start_matches('[').trim_end_matches(']').trim();
    if inner.is_empty() {
        return Ok(Vec::new());
    }
    inner
        .split(',')
        .map(|part| {
            part.trim().parse::<u64>().map_err(|_| {
                CliError::new(format!("{option} \"{text}\": \"{}\" is not a length (a whole number ≥ 0)", part.trim()))
            })
        })
        .collect()
}

/// `text` as JSON when it is JSON, else as a JSON string: `3`, `[1, 2]`, `"x"` and `NaN`-free
/// numbers keep their type, and `kelvin` needs no quotes.
pub(crate) fn json_or_text(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{json_or_text, shape};

    #[test]
    fn shapes_and_bare_json_parse() {
        assert_eq!(shape("--shape", "100, 200").ok(), Some(vec![100, 200]));
        assert_eq!(shape("--shape", "[3]").ok(), Some(vec![3]));
        assert_eq!(shape("--shape", "").ok(), Some(vec![]));
        assert!(shape("--shape", "3,-1").is_err());
        assert!(shape("--shape", "3,,4").is_err());
        assert_eq!(json_or_text("kelvin"), json!("kelvin"));
        assert_eq!(json_or_text("[1, 2]"), json!([1, 2]));
        assert_eq!(json_or_text("\"3\""), json!("3"));
        assert_eq!(json_or_text("NaN"), json!("NaN"));
    }
}
