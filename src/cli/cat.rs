//! `zarrdb cat STORE ARRAY [--region R] [--json | --raw | --npy]`.

use std::io::Write;

use serde_json::Value;
use zarrdb::transfer::NpyHeader;
use zarrdb::{Array, DataType};

use super::region::{for_each_slab, parse_region, Selection};
use super::{locator, output, progress, render, CliError, CliResult};

/// How `cat` prints.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Indented JSON lists.
    Text,
    /// One line of JSON.
    Json,
    /// The C-order little-endian element bytes.
    Raw,
    /// A NumPy `.npy` file.
    Npy,
}

pub(crate) fn run(store: &str, array: &str, region: Option<&str>, format: Format) -> CliResult {
    let opened = locator::open(store)?;
    let store = opened.store.clone();
    let array = Array::open(store, array)?;
    let Selection { offset, shape, kept } = parse_region(region.unwrap_or(""), array.shape())?;
    let data_type = array.data_type();
    let mut out = std::io::stdout().lock();
    match format {
        Format::Raw | Format::Npy => {
            if format == Format::Raw && data_type.is_variable_length() {
                return Err(CliError::new(format!(
                    "--raw: {} has variable-length elements ({data_type}), which have no fixed-size bytes; use --json",
                    array.path()
                )));
            }
            if format == Format::Npy {
                // The dimensions an index selects are dropped, as NumPy's indexing drops them.
                let dims: Vec<u64> = shape.iter().zip(&kept).filter(|(_, k)| **k).map(|(s, _)| *s).collect();
                let header = NpyHeader::new(&data_type, &dims, array.path().as_str())?;
                out.write_all(&header.to_bytes()).map_err(output::failed)?;
            }
            // In slabs of bounded size, so memory does not grow with the region.
            let total = shape.iter().fold(data_type.size() as u64, |n, &d| n.saturating_mul(d));
            let bar = progress::bytes(total, "cat");
            for_each_slab(&offset, &shape, data_type.size() as u64, RAW_SLAB_BYTES, |o, s| -> CliResult {
                let bytes = array.read_region_bytes(o, s)?;
                out.write_all(&bytes).map_err(output::failed)?;
                progress::advance(&bar, bytes.len() as u64);
                Ok(())
            })?;
            progress::finish(bar);
        }
        Format::Text | Format::Json => {
            let elements = shape.iter().try_fold(1u64, |n, &s| n.checked_mul(s));
            if elements.is_none_or(|n| n > MAX_JSON_ELEMENTS) {
                return Err(CliError::new(format!(
                    "{}: the region holds more than {MAX_JSON_ELEMENTS} elements, too many to print as JSON; \
                     choose a smaller --region, or use --raw or --npy (streamed)",
                    array.path()
                )));
            }
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
            let text = if format == Format::Json { value.to_string() } else { serde_json::to_string_pretty(&value)? };
            writeln!(out, "{text}").map_err(output::failed)?;
        }
    }
    out.flush().map_err(output::failed)
}

/// `--raw` reads and writes the region in pieces of at most this many bytes.
const RAW_SLAB_BYTES: u64 = 64 << 20;

/// JSON output holds the whole region as values in memory: beyond this many, it is refused.
const MAX_JSON_ELEMENTS: u64 = 1 << 24;

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
