//! `zarrdb write STORE ARRAY FILE [--region R]`, `zarrdb append STORE ARRAY FILE --axis N` and
//! `zarrdb resize STORE ARRAY --shape S`. FILE is a NumPy `.npy` file, or `-` for standard input;
//! its data type must be the array's and its shape the region's. Each command is one atomic
//! library call (a database commits it as one transaction).

use std::io::Read;

use zarrdb::error::NpyError;
use zarrdb::transfer::NpyHeader;
use zarrdb::Array;

use super::region::{parse_region, Selection};
use super::{args, locator, CliError, CliResult};

pub(crate) fn write(store: &str, path: &str, file: &str, region: Option<&str>) -> CliResult {
    let opened = locator::open_writable(store, false)?;
    let array = Array::open(opened.store.clone(), path)?;
    let Selection { offset, shape, kept } = parse_region(region.unwrap_or(""), array.shape())?;
    let (header, data) = read_npy(file, &array)?;
    // The file may keep the dimensions an index selects (length 1) or drop them, as NumPy does.
    let dropped: Vec<u64> = shape.iter().zip(&kept).filter(|(_, k)| **k).map(|(s, _)| *s).collect();
    if header.shape() != shape && header.shape() != dropped {
        return Err(NpyError::WrongShape {
            source_name: file.to_owned(),
            found: header.shape().to_vec(),
            reason: format!("the region {} of {} has shape {shape:?}", region.unwrap_or(":"), array.path()),
        }
        .into());
    }
    array.write_region_bytes(&offset, &shape, &data)?;
    Ok(())
}

pub(crate) fn append(store: &str, path: &str, file: &str, axis: usize) -> CliResult {
    let opened = locator::open_writable(store, false)?;
    let mut array = Array::open(opened.store.clone(), path)?;
    let (header, data) = read_npy(file, &array)?;
    let mut shape = header.shape().to_vec();
    // One slice along the axis may come without it (a row appended to a table).
    if shape.len() + 1 == array.shape().len() && axis <= shape.len() {
        shape.insert(axis, 1);
    }
    array.append_bytes(axis, &shape, &data)?;
    Ok(())
}

pub(crate) fn resize(store: &str, path: &str, shape: &str) -> CliResult {
    let shape = args::shape("--shape", shape)?;
    let opened = locator::open_writable(store, false)?;
    Array::open(opened.store.clone(), path)?.resize(&shape)?;
    Ok(())
}

/// The `.npy` file `file` (`-`: standard input), checked to hold `array`'s data type.
fn read_npy(file: &str, array: &Array) -> Result<(NpyHeader, Vec<u8>), CliError> {
    let (header, data) = if file == "-" {
        NpyHeader::read_file(&mut std::io::stdin().lock(), "standard input")?
    } else {
        let mut reader: Box<dyn Read> = Box::new(std::io::BufReader::new(
            std::fs::File::open(file).map_err(|e| CliError::new(format!("cannot open {file}: {e}")))?,
        ));
        NpyHeader::read_file(&mut reader, file)?
    };
    if header.data_type() != &array.data_type() {
        return Err(NpyError::WrongType {
            source_name: file.to_owned(),
            array: array.path().to_string(),
            expected: array.data_type().to_string(),
            found: header.data_type().to_string(),
        }
        .into());
    }
    Ok((header, data))
}
