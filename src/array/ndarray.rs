//! `ndarray` arrays in and out of region reads and writes (the `ndarray` feature), so a program
//! that computes with `ndarray` hands its views to zarrdb without flattening them by hand.

use ::ndarray::{ArrayD, ArrayView, Dimension, IxDyn};

use super::{Array, Element};
use crate::error::{ArrayError, Error};

impl Array {
    /// Read the region of `shape` at `offset` into an n-dimensional `ndarray` array (C order).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore};
    ///
    /// let meta = ArrayMetadata::new(DataType::Float64, vec![4, 6], vec![2, 3]);
    /// let array = Array::create(Arc::new(MemoryStore::new()), "/temperature", meta)?;
    /// let block = ndarray::Array2::from_shape_fn((2, 3), |(i, j)| (10 * i + j) as f64);
    /// array.write_ndarray(&[1, 2], block.view())?;
    ///
    /// let back = array.read_ndarray::<f64>(&[1, 2], &[2, 3])?;
    /// assert_eq!(back, block.into_dyn());
    /// // A transposed view is written in its logical order.
    /// array.write_ndarray(&[0, 0], back.t())?;
    /// assert_eq!(array.read_ndarray::<f64>(&[0, 0], &[3, 2])?[[2, 1]], 12.0);
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn read_ndarray<T: Element>(&self, offset: &[u64], shape: &[u64]) -> Result<ArrayD<T>, Error> {
        let values = self.read_region::<T>(offset, shape)?;
        let too_large = || {
            let elements = shape.iter().map(|&s| u128::from(s)).product();
            Error::from(ArrayError::TooLarge { array: self.path().to_string(), elements })
        };
        let dims =
            shape.iter().map(|&s| usize::try_from(s)).collect::<Result<Vec<usize>, _>>().map_err(|_| too_large())?;
        ArrayD::from_shape_vec(IxDyn(&dims), values).map_err(|_| too_large())
    }

    /// Write `values` at `offset`: the region has the view's shape. A view in standard layout
    /// (C order, contiguous) is written in place; any other view (transposed, strided, sliced)
    /// is first gathered in its logical order.
    pub fn write_ndarray<T: Element, D: Dimension>(
        &self,
        offset: &[u64],
        values: ArrayView<'_, T, D>,
    ) -> Result<(), Error> {
        let shape: Vec<u64> = values.shape().iter().map(|&s| s as u64).collect();
        match values.as_slice() {
            Some(contiguous) => self.write_region(offset, &shape, contiguous),
            None => self.write_region(offset, &shape, &values.iter().copied().collect::<Vec<T>>()),
        }
    }
}
