//! One array's regions moved in a single engine call, for `zarrdb.CodecPipeline`
//! (`pysrc/zarrdb/_pipeline.py`): zarr-python hands its codec pipeline the whole selection of an
//! assignment or a read, and when that selection is one box of a fixed-size array, the pipeline
//! passes it here instead of encoding and storing chunk by chunk in Python.

use std::sync::Arc;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use zarrdb::metadata::ArrayMetadata;
use zarrdb::Array;

use crate::errors::{array_changed, to_py};
use crate::registry::{Followed, Handle};
use crate::value::Value;

/// An array opened on a `Store` (the auto-commit store, a transaction's or a snapshot's).
/// One chunk's part of `write_scattered`: its coordinates, the flat positions in it (None: the
/// whole chunk) and the values, as Python buffers.
type ScatteredChunk = (Vec<u64>, Option<PyBuffer<u8>>, PyBuffer<u8>);

#[pyclass(frozen, module = "zarrdb._native")]
pub(crate) struct NativeArray {
    opened: Opened,
    /// Whether every element has the same size, known at the open.
    fixed_size: bool,
    /// Whether zarrdb runs every codec of the array, known at the open.
    runnable: bool,
}

enum Opened {
    /// On a transaction's or a snapshot's store, which holds its handle for as long as it lives.
    Fixed(Arc<Array>),
    /// On the auto-commit store: of whichever handle the database has now, so that an array
    /// kept between reads (`zarrdb.CodecPipeline` keeps them) never holds a read-only handle
    /// that a writable store of the process must replace (`registry::Entry::upgrade`). Opened
    /// again after an upgrade, it must find the metadata it was first opened with: the caller
    /// keeps it as the array its document named then.
    Following { entry: Handle, path: String, array: Arc<Followed>, metadata: Box<ArrayMetadata> },
}

/// Why the array could not be used: the library's error, or an array opened again after an
/// upgrade that was made again meanwhile with other metadata.
enum Unusable {
    Failed(zarrdb::Error),
    Changed(String),
}

impl From<zarrdb::Error> for Unusable {
    fn from(error: zarrdb::Error) -> Unusable {
        Unusable::Failed(error)
    }
}

impl From<Unusable> for PyErr {
    fn from(unusable: Unusable) -> PyErr {
        match unusable {
            Unusable::Failed(error) => to_py(error),
            Unusable::Changed(path) => array_changed(&path),
        }
    }
}

impl NativeArray {
    fn new(opened: Opened, array: &Array) -> NativeArray {
        let fixed_size = !array.data_type().is_variable_length();
        NativeArray { opened, fixed_size, runnable: array.check_codecs().is_ok() }
    }

    /// An array opened on a transaction's or a snapshot's store.
    pub(crate) fn fixed(array: Array) -> NativeArray {
        let array = Arc::new(array);
        NativeArray::new(Opened::Fixed(array.clone()), &array)
    }

    /// The array at `path` on the auto-commit store of `entry`'s current handle.
    pub(crate) fn following(entry: Handle, path: &str) -> Result<NativeArray, zarrdb::Error> {
        let held = Arc::new(Followed::default());
        let array = entry.followed(&held, |store| Array::open(store, path))?;
        let metadata = Box::new(array.metadata().clone());
        let opened = Opened::Following { entry, path: path.to_owned(), array: held, metadata };
        Ok(NativeArray::new(opened, &array))
    }

    /// Whether `document` (a `zarr.json`) describes the array as it was opened.
    pub(crate) fn described_by(&self, document: &[u8]) -> bool {
        let Ok(described) = ArrayMetadata::from_json(document) else { return false };
        match &self.opened {
            Opened::Fixed(array) => array.metadata() == &described,
            Opened::Following { metadata, .. } => metadata.as_ref() == &described,
        }
    }

    fn array(&self) -> Result<Arc<Array>, Unusable> {
        match &self.opened {
            Opened::Fixed(array) => Ok(array.clone()),
            Opened::Following { entry, path, array, metadata } => entry.followed(array, |store| {
                let array = Array::open(store, path)?;
                if array.metadata() != metadata.as_ref() {
                    return Err(Unusable::Changed(path.clone()));
                }
                Ok(array)
            }),
        }
    }
}

#[pymethods]
impl NativeArray {
    /// Whether every element has the same size (region reads and writes need it).
    #[getter]
    fn fixed_size(&self) -> bool {
        self.fixed_size
    }

    /// Whether zarrdb can run every codec of the array (and its chunks are within the size it
    /// decodes): region reads and writes need it.
    #[getter]
    fn runnable(&self) -> bool {
        self.runnable
    }

    /// The region `offset..offset+shape` as C-order little-endian element bytes; chunks not
    /// stored read as the fill value.
    fn read_region(&self, py: Python<'_>, offset: Vec<u64>, shape: Vec<u64>) -> PyResult<Value> {
        let bytes = py.detach(|| Ok::<_, Unusable>(self.array()?.read_region_bytes(&offset, &shape)?))?;
        Ok(Value::new(bytes))
    }

    /// `read_region`, written into `out` (a writable C-contiguous buffer of exactly the region's
    /// bytes, a numpy array viewed as `uint8`) in place instead of into new bytes: the output
    /// zarr-python allocated is filled without a copy of the region in between.
    fn read_region_into(&self, py: Python<'_>, offset: Vec<u64>, shape: Vec<u64>, out: PyBuffer<u8>) -> PyResult<()> {
        if out.readonly() {
            return Err(PyValueError::new_err("read_region_into takes a writable buffer"));
        }
        let target = Bytes::of(&out, "read_region_into")?;
        // SAFETY: see `Bytes::get_mut`: `out` is exported and writable (checked above) and
        // stays alive until after the call, dropped below.
        let read = py.detach(move || {
            Ok::<_, Unusable>(self.array()?.read_region_bytes_into(&offset, &shape, unsafe { target.get_mut() })?)
        });
        drop(out);
        Ok(read?)
    }

    /// Write the region `offset..offset+shape` from C-order little-endian element bytes: one
    /// atomic commit on the auto-commit store, part of the transaction on a transaction's store.
    /// Chunks covered in part are read, patched and rewritten inside that commit, so concurrent
    /// writers of other elements of the same chunk lose nothing.
    ///
    /// `data` is any C-contiguous buffer of bytes (a numpy array viewed as `uint8`), read in
    /// place: a 268 MB array copied into `bytes` first cost 0.4 s of a 1.7 s write.
    fn write_region(&self, py: Python<'_>, offset: Vec<u64>, shape: Vec<u64>, data: PyBuffer<u8>) -> PyResult<()> {
        let bytes = Bytes::of(&data, "write_region")?;
        let written =
            py.detach(move || Ok::<_, Unusable>(self.array()?.write_region_bytes(&offset, &shape, bytes.get())?));
        drop(data);
        Ok(written?)
    }

    /// Set elements scattered over chunks (`zarrdb::Array::write_scattered`): for each chunk,
    /// `(coords, indices, values)` with `indices` the flat C-order positions in the chunk as
    /// little-endian u64 bytes (None: `values` is the whole chunk) and `values` the elements'
    /// little-endian bytes, both C-contiguous buffers read in place. One atomic commit on the
    /// auto-commit store, part of the transaction on a transaction's store; a chunk another
    /// writer stores meanwhile is read and patched again, so no concurrent update is lost.
    fn write_scattered(&self, py: Python<'_>, chunks: Vec<ScatteredChunk>) -> PyResult<()> {
        let mut parts = Vec::with_capacity(chunks.len());
        for (coords, indices, values) in &chunks {
            let indices = indices.as_ref().map(|i| Bytes::of(i, "write_scattered")).transpose()?;
            if indices.is_some_and(|i| i.len % 8 != 0) {
                return Err(PyValueError::new_err("write_scattered takes positions as 8-byte integers"));
            }
            parts.push((coords.as_slice(), indices, Bytes::of(values, "write_scattered")?));
        }
        let written = py.detach(move || {
            let positions: Vec<Option<Vec<u64>>> = parts
                .iter()
                .map(|(_, indices, _)| {
                    indices.map(|i| {
                        i.get().chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default())).collect()
                    })
                })
                .collect();
            let elements: Vec<zarrdb::ChunkElements<'_>> = parts
                .iter()
                .zip(&positions)
                .map(|((coords, _, values), indices)| zarrdb::ChunkElements {
                    coords,
                    indices: indices.as_deref(),
                    values: values.get(),
                })
                .collect();
            Ok::<_, Unusable>(self.array()?.write_scattered(&elements)?)
        });
        drop(chunks);
        Ok(written?)
    }
}

/// The bytes of a buffer export, read in place with the GIL released.
#[derive(Clone, Copy)]
struct Bytes {
    address: usize,
    len: usize,
}

impl Bytes {
    /// The bytes of `data`, which must stay exported (the `PyBuffer` alive) while they are read.
    fn of(data: &PyBuffer<u8>, method: &str) -> PyResult<Bytes> {
        if !data.is_c_contiguous() {
            return Err(PyValueError::new_err(format!("{method} takes C-contiguous buffers of bytes")));
        }
        Ok(Bytes { address: data.buf_ptr() as usize, len: data.len_bytes() })
    }

    fn get(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: every `Bytes` is made by `of` from a `PyBuffer` that its caller keeps alive
        // until after the engine call reading it returns (`write_region`, `write_scattered`
        // drop their buffers last): the exporter keeps the memory allocated (numpy refuses to
        // resize an exported array), and it is `len` contiguous bytes from `address` (checked
        // by `of`). The slice is only read, and sound as long as nothing writes to the buffer
        // during the call: the caller's contract, the same as for every CPython consumer that
        // reads a buffer with the GIL released (`os.write`, `hashlib`, `zlib`).
        // zarrdb.CodecPipeline passes the value of an assignment, which zarr-python holds
        // unchanged until the assignment returns, or arrays it made itself; user code that
        // changes that array from another thread meanwhile has a data race of its own.
        unsafe { std::slice::from_raw_parts(self.address as *const u8, self.len) }
    }

    /// The bytes to write, for a buffer its exporter declared writable.
    ///
    /// # Safety
    /// The `PyBuffer` `self` was made from must be writable (not `readonly()`) and stay alive
    /// until the slice is dropped, and nothing else may read or write the buffer meanwhile: the
    /// contract of every CPython consumer that fills a buffer with the GIL released
    /// (`readinto`). zarrdb.CodecPipeline passes the output array zarr-python allocated for the
    /// read, which nothing else sees until the read returns.
    unsafe fn get_mut<'a>(&self) -> &'a mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: `len` contiguous bytes from `address` (checked by `of`), kept allocated and
        // writable by the caller's contract above.
        unsafe { std::slice::from_raw_parts_mut(self.address as *mut u8, self.len) }
    }
}
