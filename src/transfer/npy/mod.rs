//! NumPy's `.npy` files, the format `numpy.save` writes: a header (magic string, version, a
//! Python dict of `descr`, `fortran_order` and `shape`) and the elements' bytes. The command
//! line reads them into arrays (`zarrdb write`, `zarrdb append`) and writes regions as them
//! (`zarrdb cat --npy`). The type strings are the Zarr v2 ones (`transfer/plan/dtype.rs`, their
//! one home); data in big-endian or Fortran order is brought to the little-endian C order of
//! zarrdb's element bytes on the way in.

mod literal;

use std::io::Read;

use serde_json::Value;

use super::plan::dtype::{self, Endian};
use crate::error::{NpyError, PlanError};
use crate::metadata::DataType;

/// The first bytes of every `.npy` file.
const MAGIC: &[u8] = b"\x93NUMPY";

/// The longest header read. NumPy's own reader stops at 10,000 bytes unless told otherwise; a
/// structured type of many fields can need more, and this still bounds what a hostile file costs.
const MAX_HEADER: usize = 1 << 20;

/// The header of a `.npy` file: what its data holds.
///
/// ```
/// use zarrdb::transfer::NpyHeader;
/// use zarrdb::DataType;
/// let header = NpyHeader::new(&DataType::Float32, &[2, 3], "/a")?;
/// let mut file = header.to_bytes();
/// file.extend((0..6u8).flat_map(|i| f32::from(i).to_le_bytes()));
/// let (read, data) = NpyHeader::read_file(&mut file.as_slice(), "a.npy")?;
/// assert_eq!((read.data_type(), read.shape()), (&DataType::Float32, &[2u64, 3][..]));
/// assert_eq!(data.len(), 24);
/// # Ok::<(), zarrdb::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct NpyHeader {
    data_type: DataType,
    shape: Vec<u64>,
    fortran_order: bool,
    big_endian: bool,
}

impl NpyHeader {
    /// The header of a little-endian C-order file holding `shape` elements of `data_type`;
    /// [`NpyError::NoNumpyType`] for a type NumPy cannot hold in a `.npy` file (variable-length
    /// text and bytes, bfloat16). `array` names the array for that message.
    pub fn new(data_type: &DataType, shape: &[u64], array: &str) -> Result<NpyHeader, NpyError> {
        dtype::to_numpy(data_type).map_err(|reason| NpyError::NoNumpyType {
            array: array.to_owned(),
            data_type: data_type.to_string(),
            reason,
        })?;
        Ok(NpyHeader { data_type: data_type.clone(), shape: shape.to_vec(), fortran_order: false, big_endian: false })
    }

    /// The element type.
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// The shape.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The bytes of data the header announces, or `None` when that overflows 64 bits.
    pub fn data_len(&self) -> Option<u64> {
        self.shape.iter().try_fold(self.data_type.size() as u64, |n, &d| n.checked_mul(d))
    }

    /// Read a header from `reader`, which is left at the first byte of data. `source_name`
    /// names the file in errors.
    pub fn read(reader: &mut dyn Read, source_name: &str) -> Result<NpyHeader, NpyError> {
        let not_npy = |reason: String| NpyError::NotNpy { source_name: source_name.to_owned(), reason };
        let io = |source| NpyError::Io { source_name: source_name.to_owned(), operation: "read", source };
        let mut prefix = [0u8; 8];
        read_exact_or(reader, &mut prefix, source_name, "its first 8 bytes")?;
        if &prefix[..6] != MAGIC {
            return Err(not_npy("it does not start with NumPy's magic string \\x93NUMPY".into()));
        }
        let (major, minor) = (prefix[6], prefix[7]);
        let len = match major {
            1 => {
                let mut len = [0u8; 2];
                read_exact_or(reader, &mut len, source_name, "the header length")?;
                u16::from_le_bytes(len) as usize
            }
            2 | 3 => {
                let mut len = [0u8; 4];
                read_exact_or(reader, &mut len, source_name, "the header length")?;
                u32::from_le_bytes(len) as usize
            }
            _ => return Err(not_npy(format!("format version {major}.{minor}; versions 1.0, 2.0 and 3.0 are read"))),
        };
        if len > MAX_HEADER {
            return Err(not_npy(format!("a header of {len} bytes, more than the {MAX_HEADER} read")));
        }
        let mut bytes = Vec::new();
        reader.take(len as u64).read_to_end(&mut bytes).map_err(io)?;
        if bytes.len() < len {
            return Err(not_npy(format!("the file ends inside its {len}-byte header")));
        }
        // Versions 1 and 2 write the header in Latin-1, version 3 in UTF-8.
        let text = if major == 3 {
            String::from_utf8(bytes).map_err(|_| not_npy("a version 3.0 header that is not UTF-8".into()))?
        } else {
            bytes.iter().map(|&b| char::from(b)).collect()
        };
        let header = literal::parse(&text).map_err(|why| not_npy(format!("its header: {why}")))?;
        Self::from_dict(&header, source_name)
    }

    fn from_dict(header: &Value, source_name: &str) -> Result<NpyHeader, NpyError> {
        let not_npy = |reason: &str| NpyError::NotNpy { source_name: source_name.to_owned(), reason: reason.into() };
        let dict = header.as_object().ok_or_else(|| not_npy("its header is not a dict"))?;
        let mut keys: Vec<&str> = dict.keys().map(String::as_str).collect();
        keys.sort_unstable();
        if keys != ["descr", "fortran_order", "shape"] {
            return Err(not_npy("its header's keys are not exactly 'descr', 'fortran_order' and 'shape'"));
        }
        let fortran_order = dict["fortran_order"].as_bool().ok_or_else(|| not_npy("'fortran_order' is not a bool"))?;
        let shape = dict["shape"]
            .as_array()
            .and_then(|dims| dims.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
            .ok_or_else(|| not_npy("'shape' is not a tuple of integers"))?;
        let parsed = descr(&dict["descr"], source_name)?;
        let header = NpyHeader {
            data_type: parsed.data_type,
            shape,
            fortran_order,
            big_endian: parsed.endian == Some(Endian::Big),
        };
        if header.data_len().is_none() {
            return Err(not_npy("its shape holds more bytes than 64 bits count"));
        }
        Ok(header)
    }

    /// Read the data that follows the header: exactly [`Self::data_len`] bytes and nothing
    /// after them, returned as little-endian elements in C order. Memory grows with the bytes
    /// actually read, never with what the header claims.
    pub fn read_data(&self, reader: &mut dyn Read, source_name: &str) -> Result<Vec<u8>, NpyError> {
        let io = |source| NpyError::Io { source_name: source_name.to_owned(), operation: "read", source };
        let expected = self.data_len().unwrap_or(u64::MAX);
        let mut data = Vec::new();
        reader.take(expected).read_to_end(&mut data).map_err(io)?;
        let short = NpyError::DataLength { source_name: source_name.to_owned(), expected, found: data.len() as u64 };
        if (data.len() as u64) < expected {
            return Err(short);
        }
        let mut rest = Vec::new();
        reader.take(1 << 20).read_to_end(&mut rest).map_err(io)?;
        if !rest.is_empty() {
            return Err(NpyError::DataLength {
                source_name: source_name.to_owned(),
                expected,
                found: expected + rest.len() as u64,
            });
        }
        if self.big_endian {
            swap_to_little(&mut data, swap_unit(&self.data_type));
        }
        if self.fortran_order && self.shape.len() > 1 {
            data = fortran_to_c(&data, &self.shape, self.data_type.size());
        }
        Ok(data)
    }

    /// [`Self::read`] then [`Self::read_data`].
    pub fn read_file(reader: &mut dyn Read, source_name: &str) -> Result<(NpyHeader, Vec<u8>), NpyError> {
        let header = Self::read(reader, source_name)?;
        let data = header.read_data(reader, source_name)?;
        Ok((header, data))
    }

    /// The header as NumPy writes it: version 1.0 when it fits (2.0 for a longer one, 3.0 when a
    /// field name is not Latin-1), padded so the data starts at a multiple of 64 bytes, for
    /// little-endian data in C order (what [`Self::read_data`] returns). NumPy's `np.load`
    /// refuses headers of more than 10,000 bytes (a record type of hundreds of fields) unless
    /// given `max_header_size`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let descr = dtype::to_numpy(&self.data_type).map_or_else(|_| literal::string("|V0"), |d| python(&d));
        let shape = match self.shape.as_slice() {
            [one] => format!("({one},)"),
            dims => format!("({})", dims.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")),
        };
        // The data written after this header is in C order, whatever order a file read had.
        let mut dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}");
        let latin1 = dict.chars().all(|c| (c as u32) < 256);
        let encoded_len = if latin1 { dict.chars().count() } else { dict.len() };
        // The header (dict, padding, newline) after a prefix of `prefix` bytes, padded so the
        // data starts at a multiple of 64.
        let padded = |prefix: usize| (prefix + encoded_len + 1).div_ceil(64) * 64 - prefix;
        let (major, prefix) = match (latin1, padded(10) <= u16::MAX as usize) {
            (false, _) => (3u8, 12),
            (true, true) => (1, 10),
            (true, false) => (2, 12),
        };
        dict.extend(std::iter::repeat_n(' ', padded(prefix) - encoded_len - 1));
        dict.push('\n');
        let body: Vec<u8> = if latin1 { dict.chars().map(|c| c as u8).collect() } else { dict.into_bytes() };
        let mut out = Vec::with_capacity(prefix + body.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&[major, 0]);
        if major == 1 {
            out.extend_from_slice(&(body.len() as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(&body);
        out
    }
}

/// The element type of a header's `descr`. The native order `=` is little-endian on every
/// machine zarrdb builds for; objects are refused here with a reason that fits a file.
fn descr(value: &Value, source_name: &str) -> Result<dtype::Dtype, NpyError> {
    let refuse = NpyError::DataType;
    let value = match value.as_str() {
        Some(text) if text.trim_start_matches(['<', '>', '|', '=']).starts_with('O') => {
            return Err(refuse(PlanError::unsupported(
                source_name,
                "descr",
                format!("\"{text}\""),
                "an object array holds pickled Python objects; save text as a fixed-width '<U' array",
            )));
        }
        Some(text) => Value::String(text.strip_prefix('=').map_or_else(|| text.to_owned(), |t| format!("<{t}"))),
        None => value.clone(),
    };
    dtype::from_numpy(&value, None, source_name).map_err(refuse)
}

/// A JSON value from [`dtype::to_numpy`] as the Python literal of a `descr`: a string, or a
/// list of `(name, type)` tuples.
fn python(value: &Value) -> String {
    match value {
        Value::String(s) => literal::string(s),
        Value::Array(items) if items.iter().all(Value::is_array) => {
            format!("[{}]", items.iter().map(python).collect::<Vec<_>>().join(", "))
        }
        Value::Array(pair) => format!("({})", pair.iter().map(python).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

fn read_exact_or(reader: &mut dyn Read, buf: &mut [u8], source_name: &str, what: &str) -> Result<(), NpyError> {
    reader.read_exact(buf).map_err(|source| match source.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            NpyError::NotNpy { source_name: source_name.to_owned(), reason: format!("the file ends before {what}") }
        }
        _ => NpyError::Io { source_name: source_name.to_owned(), operation: "read", source },
    })
}

/// The width of the numbers that make up an element, whose bytes a big-endian file reverses:
/// a complex number is two floats, a UTF-32 string its code points.
fn swap_unit(data_type: &DataType) -> usize {
    match data_type {
        DataType::Complex64 | DataType::FixedLengthUtf32 { .. } => 4,
        DataType::Complex128 => 8,
        other => other.size(),
    }
}

fn swap_to_little(data: &mut [u8], unit: usize) {
    if unit > 1 {
        data.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
    }
}

/// Elements of `size` bytes in Fortran order (first index fastest) rearranged into C order.
fn fortran_to_c(data: &[u8], shape: &[u64], size: usize) -> Vec<u8> {
    let rank = shape.len();
    // Fortran strides, in elements.
    let mut strides = vec![1usize; rank];
    for d in 1..rank {
        strides[d] = strides[d - 1] * shape[d - 1] as usize;
    }
    let mut out = Vec::with_capacity(data.len());
    let mut index = vec![0u64; rank];
    for _ in 0..data.len() / size.max(1) {
        let at: usize = index.iter().zip(&strides).map(|(&i, &s)| i as usize * s).sum::<usize>() * size;
        out.extend_from_slice(&data[at..at + size]);
        // The next index in C order: the last dimension fastest.
        for d in (0..rank).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests;
