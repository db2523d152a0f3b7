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
            for_each_read_slab(&array, &offset, &shape, data_type.size() as u64, RAW_SLAB_BYTES, |o, s| {
                let bytes = array.read_region_bytes(o, s)?;
                out.write_all(&bytes).map_err(output::failed)?;
                progress::advance(&bar, bytes.len() as u64);
                Ok(())
            })?;
            progress::finish(bar);
        }
        Format::Text | Format::Json => {
            // The dimensions an index selects are dropped, as NumPy's indexing drops them.
            let dims: Vec<u64> = shape.iter().zip(&kept).filter(|(_, k)| **k).map(|(s, _)| *s).collect();
            let mut printer = Nested::new(std::io::BufWriter::new(&mut out), &dims, format == Format::Text);
            let leaves = printer.leaves();
            let empty = dims.contains(&0);
            let bytes = leaves.map(|n| if empty { 0 } else { u128::from(n) * data_type.size() as u128 });
            if leaves.is_none_or(|n| n > MAX_JSON_ELEMENTS) || bytes.is_none_or(|b| b > MAX_JSON_BYTES) {
                return Err(CliError::new(format!(
                    "{}: the region holds more than {MAX_JSON_ELEMENTS} elements or {MAX_JSON_BYTES} bytes, too many \
                     to print as JSON; choose a smaller --region, or use --raw or --npy (streamed)",
                    array.path()
                )));
            }
            if empty {
                // No element to read: the lists are printed empty.
                for _ in 0..leaves.unwrap_or(0) {
                    printer.leaf(&Value::Array(Vec::new()))?;
                }
            } else {
                // Read and printed a slab at a time: memory holds one slab and one element's
                // JSON, whatever the region's size.
                let (element, limit) = match data_type {
                    DataType::String | DataType::Bytes => (1, JSON_SLAB_ITEMS),
                    _ => (data_type.size() as u64, JSON_SLAB_BYTES),
                };
                for_each_read_slab(&array, &offset, &shape, element, limit, |o, s| -> CliResult {
                    match data_type {
                        DataType::String => {
                            for item in array.read_items::<String>(o, s)? {
                                printer.leaf(&Value::from(item))?;
                            }
                        }
                        DataType::Bytes => {
                            for item in array.read_items::<Vec<u8>>(o, s)? {
                                printer.leaf(&render::bytes_item(&item))?;
                            }
                        }
                        _ => {
                            let bytes = array.read_region_bytes(o, s)?;
                            for e in bytes.chunks_exact(data_type.size()) {
                                printer.leaf(&render::element(e, data_type.clone()))?;
                            }
                        }
                    }
                    Ok(())
                })?;
            }
            printer.finish()?;
        }
    }
    out.flush().map_err(output::failed)
}

/// `--raw` reads and writes the region in pieces of at most this many bytes.
const RAW_SLAB_BYTES: u64 = 64 << 20;

/// JSON output is read in pieces of at most this many bytes of elements, or this many items of
/// a variable-length type (whose size is known only once read; an item is at most a chunk).
const JSON_SLAB_BYTES: u64 = 16 << 20;
const JSON_SLAB_ITEMS: u64 = 1 << 16;

/// JSON output is for regions a person reads: beyond this many elements, or this many bytes of
/// them (a text element holds up to 128 KiB), it is refused. Memory does not depend on it: the
/// output streams.
const MAX_JSON_ELEMENTS: u64 = 1 << 24;
const MAX_JSON_BYTES: u128 = 1 << 30;

/// Most chunks one slab may touch: a read holds a small record per chunk it touches, so a slab of
/// tiny chunks is cut smaller than its byte limit alone would make it.
const MAX_SLAB_CHUNKS: u64 = 1 << 16;

/// [`for_each_slab`] over the region, each slab also touching at most [`MAX_SLAB_CHUNKS`] chunks.
fn for_each_read_slab(
    array: &Array,
    offset: &[u64],
    shape: &[u64],
    element: u64,
    limit: u64,
    mut each: impl FnMut(&[u64], &[u64]) -> CliResult,
) -> CliResult {
    for_each_slab(offset, shape, element, limit, |o, s| {
        // Chunks touched: the product of the chunk indices spanned along each dimension.
        let spans = array.metadata().chunks_overlapping(o, s);
        let touched = spans.iter().try_fold(1u64, |n, r| n.checked_mul(r.end - r.start));
        if touched.is_some_and(|t| t <= MAX_SLAB_CHUNKS) {
            each(o, s)
        } else {
            // A slab of n elements touches at most n chunks.
            for_each_slab(o, s, 1, MAX_SLAB_CHUNKS, &mut each)
        }
    })
}

/// Nested JSON lists of C-order elements, printed as the elements arrive: the brackets and
/// separators come from an odometer over the dimensions, so no recursion (a rank of 100,000 is
/// valid metadata) and no tree of values in memory. The text is what `serde_json` prints for the
/// same nested value (pretty: two spaces per level).
struct Nested<W: Write> {
    out: W,
    /// The dimensions holding elements: those before the first of length 0 (whose lists are
    /// printed as empty leaves).
    dims: Vec<u64>,
    index: Vec<u64>,
    pretty: bool,
    started: bool,
}

impl<W: Write> Nested<W> {
    fn new(out: W, dims: &[u64], pretty: bool) -> Nested<W> {
        let dims = dims[..dims.iter().position(|&d| d == 0).unwrap_or(dims.len())].to_vec();
        Nested { out, index: vec![0; dims.len()], dims, pretty, started: false }
    }

    /// How many leaves the lists hold, if it fits in a u64.
    fn leaves(&self) -> Option<u64> {
        self.dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
    }

    /// Print the next leaf, with the brackets and separators before it.
    fn leaf(&mut self, value: &Value) -> CliResult {
        if !self.started {
            self.started = true;
            for level in 0..self.dims.len() {
                self.open(level)?;
            }
        } else {
            // Advance the odometer: the levels after `carry` wrapped, and their lists close.
            let mut carry = self.dims.len();
            while carry > 0 {
                carry -= 1;
                self.index[carry] += 1;
                if self.index[carry] < self.dims[carry] {
                    break;
                }
                self.index[carry] = 0;
            }
            for level in (carry + 1..self.dims.len()).rev() {
                self.close(level)?;
            }
            self.write(b",")?;
            self.newline(carry + 1)?;
            for level in carry + 1..self.dims.len() {
                self.open(level)?;
            }
        }
        if !self.pretty {
            return serde_json::to_writer(&mut self.out, value).map_err(|e| output::failed(e.into()));
        }
        // The value's own lines (a record's fields) are indented by the depth it is printed at.
        let text = serde_json::to_string_pretty(value)?;
        let mut lines = text.split('\n');
        self.write(lines.next().unwrap_or_default().as_bytes())?;
        for line in lines {
            self.newline(self.dims.len())?;
            self.write(line.as_bytes())?;
        }
        Ok(())
    }

    /// Close every list (once every leaf is printed) and end the line.
    fn finish(mut self) -> CliResult {
        for level in (0..self.dims.len()).rev() {
            self.close(level)?;
        }
        self.write(b"\n")?;
        self.out.flush().map_err(output::failed)
    }

    fn open(&mut self, level: usize) -> CliResult {
        self.write(b"[")?;
        self.newline(level + 1)
    }

    fn close(&mut self, level: usize) -> CliResult {
        self.newline(level)?;
        self.write(b"]")
    }

    /// In pretty output, a line break and the indentation of `depth` levels.
    fn newline(&mut self, depth: usize) -> CliResult {
        if !self.pretty {
            return Ok(());
        }
        const SPACES: [u8; 256] = [b' '; 256];
        self.write(b"\n")?;
        let mut left = 2 * depth;
        while left > 0 {
            let n = left.min(SPACES.len());
            self.write(&SPACES[..n])?;
            left -= n;
        }
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) -> CliResult {
        self.out.write_all(bytes).map_err(output::failed)
    }
}
