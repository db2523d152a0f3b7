//! `zarrdb cat STORE ARRAY [--region R] [--json | --raw]`.

use std::io::Write;

use serde_json::Value;
use zarrdb::{Array, DataType};

use super::{locator, render, CliError, CliResult};

pub(crate) fn run(store: &str, array: &str, region: Option<&str>, as_json: bool, raw: bool) -> CliResult {
    let opened = locator::open(store)?;
    let store = opened.store.clone();
    let array = Array::open(store, array)?;
    let Selection { offset, shape, kept } = parse_region(region.unwrap_or(""), array.shape())?;
    let data_type = array.data_type();
    if raw && data_type.is_variable_length() {
        return Err(CliError(format!(
            "--raw: {} has variable-length elements ({data_type}), which have no fixed-size bytes; use --json",
            array.path()
        )));
    }
    let mut out = std::io::stdout().lock();
    if raw {
        out.write_all(&array.read_region_bytes(&offset, &shape)?)?;
    } else {
        let elements: Vec<Value> = match data_type {
            DataType::String => array.read_items::<String>(&offset, &shape)?.into_iter().map(Value::from).collect(),
            DataType::Bytes => {
                array.read_items::<Vec<u8>>(&offset, &shape)?.iter().map(|b| render::bytes_item(b)).collect()
            }
            _ => {
                let size = data_type.size();
                let bytes = array.read_region_bytes(&offset, &shape)?;
                bytes.chunks_exact(size).map(|e| render::element(e, data_type.clone())).collect()
            }
        };
        let dims: Vec<u64> = shape.iter().zip(&kept).filter(|(_, k)| **k).map(|(s, _)| *s).collect();
        let value = nest(&elements, &dims);
        if as_json {
            writeln!(out, "{value}")?;
        } else {
            writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// A parsed `--region`: a box, and which of its dimensions JSON output keeps.
#[derive(Debug, PartialEq)]
struct Selection {
    offset: Vec<u64>,
    shape: Vec<u64>,
    kept: Vec<bool>,
}

/// Parse "0:10,5,:" into offset, shape and which dimensions stay (an index drops its dimension
/// from JSON output, as numpy does). Missing trailing entries mean the whole dimension; negative
/// positions count from the end.
fn parse_region(text: &str, array_shape: &[u64]) -> Result<Selection, CliError> {
    let parts: Vec<&str> = if text.trim().is_empty() { Vec::new() } else { text.split(',').map(str::trim).collect() };
    if parts.len() > array_shape.len() {
        return Err(CliError(format!(
            "region \"{text}\" has {} entries, the array has {} dimensions",
            parts.len(),
            array_shape.len()
        )));
    }
    let (mut offset, mut shape, mut kept) = (Vec::new(), Vec::new(), Vec::new());
    for (d, &len) in array_shape.iter().enumerate() {
        let part = parts.get(d).copied().unwrap_or(":");
        let bad = |why: &str| CliError(format!("region entry \"{part}\" for dimension {d} (length {len}): {why}"));
        let pos = |s: &str| -> Result<u64, CliError> {
            let v: i128 = s.parse().map_err(|_| bad("not an integer"))?;
            let v = if v < 0 { v + len as i128 } else { v };
            if v < 0 || v > len as i128 {
                return Err(bad("out of bounds"));
            }
            Ok(v as u64)
        };
        match part.split_once(':') {
            Some((start, stop)) => {
                if stop.contains(':') {
                    return Err(bad("steps are not supported"));
                }
                let start = if start.is_empty() { 0 } else { pos(start)? };
                let stop = if stop.is_empty() { len } else { pos(stop)? };
                offset.push(start);
                shape.push(stop.saturating_sub(start));
                kept.push(true);
            }
            None => {
                let i = pos(part)?;
                if i >= len {
                    return Err(bad("out of bounds"));
                }
                offset.push(i);
                shape.push(1);
                kept.push(false);
            }
        }
    }
    Ok(Selection { offset, shape, kept })
}

/// Nested JSON lists of C-order elements.
fn nest(elements: &[Value], dims: &[u64]) -> Value {
    match dims.split_first() {
        None => elements.first().cloned().unwrap_or(Value::Null),
        Some((&n, rest)) => {
            let stride = rest.iter().product::<u64>() as usize;
            (0..n as usize).map(|i| nest(&elements[i * stride..(i + 1) * stride], rest)).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_region, Selection};

    #[test]
    fn regions_parse_like_numpy_slices() {
        let sel = parse_region("0:10,5,:", &[20, 8, 4]).ok().unwrap();
        assert_eq!(sel, Selection { offset: vec![0, 5, 0], shape: vec![10, 1, 4], kept: vec![true, false, true] });
        let sel = parse_region("-3:", &[10]).ok().unwrap();
        assert_eq!((sel.offset, sel.shape), (vec![7], vec![3]));
        assert!(parse_region("0:11", &[10]).is_err());
        assert!(parse_region("10", &[10]).is_err());
        assert!(parse_region("0:2:1", &[10]).is_err());
        assert!(parse_region("1,2", &[10]).is_err());
    }
}
