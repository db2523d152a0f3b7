//! One array's regions moved in a single engine call, for `zarrdb.CodecPipeline`
//! (`pysrc/zarrdb/_pipeline.py`): zarr-python hands its codec pipeline the whole selection of an
//! assignment or a read, and when that selection is one box of a fixed-size array, the pipeline
//! passes it here instead of encoding and storing chunk by chunk in Python.

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use zarrdb::Array;

use crate::errors::to_py;
use crate::value::Value;

/// An array opened on a `Store` (the auto-commit store, a transaction's or a snapshot's).
#[pyclass(frozen, module = "zarrdb._native")]
pub(crate) struct NativeArray {
    array: Array,
}

impl NativeArray {
    pub(crate) fn new(array: Array) -> NativeArray {
        NativeArray { array }
    }
}

#[pymethods]
impl NativeArray {
    /// Whether every element has the same size (region reads and writes need it).
    #[getter]
    fn fixed_size(&self) -> bool {
        !self.array.data_type().is_variable_length()
    }

    /// Whether zarrdb can run every codec of the array (and its chunks are within the size it
    /// decodes): region reads and writes need it.
    #[getter]
    fn runnable(&self) -> bool {
        self.array.check_codecs().is_ok()
    }

    /// The region `offset..offset+shape` as C-order little-endian element bytes; chunks not
    /// stored read as the fill value.
    fn read_region(&self, py: Python<'_>, offset: Vec<u64>, shape: Vec<u64>) -> PyResult<Value> {
        let bytes = py.detach(|| self.array.read_region_bytes(&offset, &shape)).map_err(to_py)?;
        Ok(Value::new(bytes))
    }

    /// Write the region `offset..offset+shape` from C-order little-endian element bytes: one
    /// atomic commit on the auto-commit store, part of the transaction on a transaction's store.
    /// Chunks covered in part are read, patched and rewritten inside that commit, so concurrent
    /// writers of other elements of the same chunk lose nothing.
    ///
    /// `data` is any C-contiguous buffer of bytes (a numpy array viewed as `uint8`), read in
    /// place: a 268 MB array copied into `bytes` first cost 0.4 s of a 1.7 s write.
    fn write_region(&self, py: Python<'_>, offset: Vec<u64>, shape: Vec<u64>, data: PyBuffer<u8>) -> PyResult<()> {
        if !data.is_c_contiguous() {
            return Err(PyValueError::new_err("write_region takes a C-contiguous buffer of bytes"));
        }
        let (address, len) = (data.buf_ptr() as usize, data.len_bytes());
        let written = py.detach(move || {
            let bytes: &[u8] = if len == 0 {
                &[]
            } else {
                // SAFETY: `data` holds the buffer export until this function returns, after this
                // closure: the exporter keeps the memory allocated (numpy refuses to resize an
                // exported array), and it is `len` contiguous bytes from `address` (checked
                // above). The slice is only read, and sound as long as nothing writes to the
                // buffer during the call: the caller's contract, the same as for every CPython
                // consumer that reads a buffer with the GIL released (`os.write`, `hashlib`,
                // `zlib`). zarrdb.CodecPipeline passes the value of an assignment, which
                // zarr-python holds unchanged until the assignment returns; user code that
                // changes that array from another thread meanwhile has a data race of its own.
                unsafe { std::slice::from_raw_parts(address as *const u8, len) }
            };
            self.array.write_region_bytes(&offset, &shape, bytes)
        });
        drop(data);
        written.map_err(to_py)
    }
}
