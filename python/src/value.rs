//! Values read from the engine, handed to Python without a copy.
//!
//! Building a `bytes` object copies the value once more, holding the GIL, into memory new to the
//! process (slow to touch on these machines); for a 1 MiB chunk that copy was a measurable part of
//! a zarr-python read. A `Value` owns the engine's buffer and lends it through the buffer protocol
//! instead: `numpy.frombuffer` (what zarr-python's `Buffer.from_bytes` calls), `memoryview` and
//! `bytes(value)` read it in place.

use std::os::raw::{c_int, c_void};

use pyo3::exceptions::PyBufferError;
use pyo3::prelude::*;
use pyo3::{ffi, PyErr};

/// A read-only byte string owned by the engine's read (buffer protocol, `len`).
#[pyclass(frozen, module = "zarrdb._native")]
pub(crate) struct Value {
    data: Vec<u8>,
}

impl Value {
    pub(crate) fn new(data: Vec<u8>) -> Value {
        Value { data }
    }
}

#[pymethods]
impl Value {
    /// Lend the bytes, read-only (a writable request fails with `BufferError`).
    ///
    /// # Safety
    /// Called by Python with a valid `view`. The bytes stay valid while the view lives:
    /// `PyBuffer_FillInfo` makes the view hold a reference to this object, which is frozen, so
    /// its vector is never moved or changed.
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("no view to fill"));
        }
        let data = &slf.get().data;
        let len = ffi::Py_ssize_t::try_from(data.len()).map_err(|_| PyBufferError::new_err("value too large"))?;
        // SAFETY: see above; readonly = 1, so Python never writes through the pointer.
        let status = unsafe { ffi::PyBuffer_FillInfo(view, slf.as_ptr(), data.as_ptr() as *mut c_void, len, 1, flags) };
        if status == -1 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }

    fn __len__(&self) -> usize {
        self.data.len()
    }
}
