//! `zarrdb write STORE ARRAY FILE [--region R]`, `zarrdb append STORE ARRAY FILE --axis N` and
//! `zarrdb resize STORE ARRAY --shape S`. FILE is a NumPy `.npy` file, or `-` for standard input;
//! its data type must be the array's and its shape the region's. The file is read first, then
//! each command opens the array, checks and writes in one transaction on a database (so nothing
//! holds the database while a slow producer feeds standard input).

use std::io::Read;

use zarrdb::error::NpyError;
use zarrdb::transfer::NpyHeader;
use zarrdb::Array;

use super::region::{for_each_slab, parse_region, Selection};
use super::{args, locator, progress, CliError, CliResult};

pub(crate) fn write(store: &str, path: &str, file: &str, region: Option<&str>) -> CliResult {
    let (name, header, data) = read_npy(file)?;
    locator::edit(store, false, |store| {
        let array = Array::open(store, path)?;
        same_type(&name, &header, &array)?;
        let Selection { offset, shape, kept } = parse_region(region.unwrap_or(""), array.shape())?;
        // The file may keep the dimensions an index selects (length 1) or drop them, as NumPy does.
        let dropped: Vec<u64> = shape.iter().zip(&kept).filter(|(_, k)| **k).map(|(s, _)| *s).collect();
        if header.shape() != shape && header.shape() != dropped {
            return Err(NpyError::WrongShape {
                source_name: name.clone(),
                found: header.shape().to_vec(),
                reason: format!("the region {} of {} has shape {shape:?}", region.unwrap_or(":"), array.path()),
            }
            .into());
        }
        write_in_slabs(&array, &offset, &shape, &data)
    })
}

/// Write `data` (the C-order bytes of the box `offset`/`shape`) in slabs of at most 64 MiB, with
/// a progress bar; inside one transaction on a database, so still one commit.
fn write_in_slabs(array: &Array, offset: &[u64], shape: &[u64], data: &[u8]) -> CliResult {
    let bar = progress::bytes(data.len() as u64, "write");
    let mut at = 0usize;
    for_each_slab(offset, shape, array.data_type().size() as u64, SLAB_BYTES, |o, s| -> CliResult {
        let len = s.iter().fold(array.data_type().size(), |n, &d| n * d as usize);
        array.write_region_bytes(o, s, &data[at..at + len])?;
        at += len;
        progress::advance(&bar, len as u64);
        Ok(())
    })?;
    progress::finish(bar);
    Ok(())
}

/// The most bytes one `write_region_bytes` call of [`write_in_slabs`] takes.
const SLAB_BYTES: u64 = 64 << 20;

pub(crate) fn append(store: &str, path: &str, file: &str, axis: usize) -> CliResult {
    let (name, header, data) = read_npy(file)?;
    locator::edit(store, false, |store| {
        let mut array = Array::open(store, path)?;
        same_type(&name, &header, &array)?;
        let mut shape = header.shape().to_vec();
        let rank = array.shape().len();
        // One slice along the axis may come without it (a row appended to a table).
        if shape.len() + 1 == rank && axis < rank {
            shape.insert(axis, 1);
        }
        let fits = shape.len() == rank
            && axis < rank
            && shape.iter().zip(array.shape()).enumerate().all(|(d, (a, b))| d == axis || a == b);
        if !fits {
            return Err(NpyError::WrongShape {
                source_name: name.clone(),
                found: header.shape().to_vec(),
                reason: format!(
                    "appending along axis {axis} to {} of shape {:?} needs its length in every other dimension",
                    array.path(),
                    array.shape()
                ),
            }
            .into());
        }
        // Grow, then write the block where the growth is: inside the transaction this is one
        // step, as `Array::append_bytes` is, with the write in slabs for the progress bar.
        let mut grown = array.shape().to_vec();
        let mut offset = vec![0; rank];
        offset[axis] = grown[axis];
        grown[axis] = grown[axis].checked_add(shape[axis]).ok_or_else(|| {
            CliError::new(format!("{}: appending {} along axis {axis} overflows its length", array.path(), shape[axis]))
        })?;
        array.resize(&grown)?;
        write_in_slabs(&array, &offset, &shape, &data)
    })
}

pub(crate) fn resize(store: &str, path: &str, shape: &str) -> CliResult {
    let shape = args::shape("--shape", shape)?;
    locator::edit(store, false, |store| {
        let spinner = progress::spinner("resize");
        let resized = Array::open(store, path)?.resize(&shape);
        progress::finish(spinner);
        Ok(resized?)
    })
}

/// The `.npy` file `file` (`-`: standard input): its name for messages, header and data.
fn read_npy(file: &str) -> Result<(String, NpyHeader, Vec<u8>), CliError> {
    if file == "-" {
        let name = "standard input".to_owned();
        let (header, data) = NpyHeader::read_file(&mut std::io::stdin().lock(), &name)?;
        return Ok((name, header, data));
    }
    let opened = std::fs::File::open(file).map_err(|e| CliError::new(format!("cannot open {file}: {e}")))?;
    let mut reader: Box<dyn Read> = Box::new(std::io::BufReader::new(opened));
    let (header, data) = NpyHeader::read_file(&mut reader, file)?;
    Ok((file.to_owned(), header, data))
}

fn same_type(name: &str, header: &NpyHeader, array: &Array) -> CliResult {
    if header.data_type() != &array.data_type() {
        return Err(NpyError::WrongType {
            source_name: name.to_owned(),
            array: array.path().to_string(),
            expected: array.data_type().to_string(),
            found: header.data_type().to_string(),
        }
        .into());
    }
    Ok(())
}
