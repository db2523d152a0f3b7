//! Text and byte-string elements as Rust values ([`Item`]): `String` for `string` and
//! `fixed_length_utf32` arrays, `Vec<u8>` for `variable_length_bytes` and `null_terminated_bytes`.
//!
//! Fixed-size types go through the byte-level region code and convert each element at the edge.
//! Variable-length types have no element bytes: their decoded chunks are item lists
//! (`codec::vlen`), so reads pick items out of each chunk's list and writes rebuild the list of
//! every chunk they touch, under the same chunk versions as any partial write, so concurrent
//! writers lose nothing.

use crate::store::Sealed;
use std::borrow::Cow;

use super::{chunk_sync, Array};
use crate::codec::region::{self, offset_in_cell, BoxIn};
use crate::codec::vlen;
use crate::error::{ArrayError, Error};
use crate::metadata::{fill_value::utf32_to_string_checked, DataType};

mod sealed {
    pub trait Sealed {}
    impl Sealed for String {}
    impl Sealed for Vec<u8> {}
}

/// A Rust type that holds the elements of text and byte-string arrays: `String` (`string`,
/// `fixed_length_utf32`) and `Vec<u8>` (`variable_length_bytes`, `null_terminated_bytes`).
///
/// ```
/// use std::sync::Arc;
/// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};
/// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
/// let a = Array::create(store, "/names", ArrayMetadata::new(DataType::String, vec![3], vec![2]))?;
/// a.write_items(&[0], &[2], &["alpha".to_string(), "b\u{e9}ta".to_string()])?;
/// assert_eq!(a.read_all_items::<String>()?, vec!["alpha", "b\u{e9}ta", ""]); // "" is the fill value
/// # Ok::<(), zarrdb::Error>(())
/// ```
pub trait Item: Clone + Send + Sync + sealed::Sealed + 'static {
    /// Whether this Rust type holds the elements of `data_type`.
    fn matches(data_type: DataType) -> bool;

    /// An item of a variable-length list (already checked by its codec).
    #[doc(hidden)]
    fn from_vlen(bytes: &[u8]) -> Self;

    /// The item's bytes in a variable-length list.
    #[doc(hidden)]
    fn vlen_bytes(&self) -> Cow<'_, [u8]>;

    /// An element of a fixed-size type.
    #[doc(hidden)]
    fn from_element(bytes: &[u8], data_type: DataType) -> Result<Self, String>;

    /// The item as an element of a fixed-size type, before padding to the element size.
    #[doc(hidden)]
    fn element_bytes(&self, data_type: DataType) -> Vec<u8>;
}

impl Item for String {
    fn matches(data_type: DataType) -> bool {
        matches!(data_type, DataType::String | DataType::FixedLengthUtf32 { .. })
    }

    fn from_vlen(bytes: &[u8]) -> Self {
        String::from_utf8_lossy(bytes).into_owned()
    }

    fn vlen_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self.as_bytes())
    }

    fn from_element(bytes: &[u8], _data_type: DataType) -> Result<Self, String> {
        utf32_to_string_checked(bytes)
    }

    fn element_bytes(&self, _data_type: DataType) -> Vec<u8> {
        self.chars().flat_map(|c| u32::from(c).to_le_bytes()).collect()
    }
}

impl Item for Vec<u8> {
    fn matches(data_type: DataType) -> bool {
        matches!(data_type, DataType::Bytes | DataType::NullTerminatedBytes { .. })
    }

    fn from_vlen(bytes: &[u8]) -> Self {
        bytes.to_vec()
    }

    fn vlen_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self)
    }

    /// NumPy's reading of `S{n}`: trailing zero bytes are padding.
    fn from_element(bytes: &[u8], _data_type: DataType) -> Result<Self, String> {
        let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        Ok(bytes[..end].to_vec())
    }

    fn element_bytes(&self, _data_type: DataType) -> Vec<u8> {
        self.clone()
    }
}

impl Array {
    /// Read the region `offset..offset+shape` of a text or byte-string array, C order.
    pub fn read_items<T: Item>(&self, offset: &[u64], shape: &[u64]) -> Result<Vec<T>, Error> {
        self.check_item::<T>()?;
        if !self.data_type().is_variable_length() {
            let bytes = self.read_region_bytes(offset, shape)?;
            let size = self.data_type().size();
            return bytes
                .chunks_exact(size)
                .enumerate()
                .map(|(index, element)| {
                    T::from_element(element, self.data_type()).map_err(|reason| {
                        ArrayError::InvalidItem { array: self.path.to_string(), index, reason }.into()
                    })
                })
                .collect();
        }
        self.require_regular("reading variable-length items")?;
        self.scoped(false, |a| a.read_vlen_unscoped(offset, shape))
    }

    /// Read a whole text or byte-string array.
    pub fn read_all_items<T: Item>(&self) -> Result<Vec<T>, Error> {
        let zeros = vec![0; self.shape().len()];
        self.read_items(&zeros, self.shape())
    }

    /// Write `values` (C order) into the region `offset..offset+shape` of a text or byte-string
    /// array. A value longer than a fixed-size element is refused, not cut; chunks left holding
    /// only the fill value are erased.
    pub fn write_items<T: Item>(&self, offset: &[u64], shape: &[u64], values: &[T]) -> Result<(), Error> {
        self.check_item::<T>()?;
        if !self.data_type().is_variable_length() {
            let bytes = self.items_as_elements(values)?;
            return self.write_region_bytes(offset, shape, &bytes);
        }
        self.require_regular("writing variable-length items")?;
        self.scoped_data(|a| a.write_vlen_unscoped(offset, shape, values))
    }

    /// Append `values` along `axis` of a text or byte-string array (see [`Array::append_bytes`]),
    /// in one atomic step. Returns the new shape.
    pub fn append_items<T: Item>(&mut self, axis: usize, shape: &[u64], values: &[T]) -> Result<Vec<u64>, Error> {
        self.check_item::<T>()?;
        if !self.data_type().is_variable_length() {
            let bytes = self.items_as_elements(values)?;
            return self.append_bytes(axis, shape, &bytes);
        }
        self.require_regular("appending variable-length items")?;
        self.append_with(axis, shape, |grown, offset| grown.write_vlen_unscoped(offset, shape, values))
    }

    fn check_item<T: Item>(&self) -> Result<(), Error> {
        if T::matches(self.data_type()) {
            return Ok(());
        }
        Err(ArrayError::ElementType {
            array: self.path.to_string(),
            data_type: self.data_type().name(),
            requested: std::any::type_name::<T>(),
        }
        .into())
    }

    /// The byte-level region API refuses variable-length arrays.
    pub(super) fn require_fixed_size(&self) -> Result<(), Error> {
        if self.data_type().is_variable_length() {
            return Err(ArrayError::VariableLength {
                array: self.path.to_string(),
                data_type: self.data_type().name(),
            }
            .into());
        }
        Ok(())
    }

    /// Fixed-size elements of `values`, each padded with zeros; longer ones are refused.
    fn items_as_elements<T: Item>(&self, values: &[T]) -> Result<Vec<u8>, Error> {
        let data_type = self.data_type();
        let size = data_type.size();
        let mut out = Vec::with_capacity(values.len().saturating_mul(size));
        for (index, value) in values.iter().enumerate() {
            let bytes = value.element_bytes(data_type.clone());
            if bytes.len() > size {
                return Err(ArrayError::ItemTooLong {
                    array: self.path.to_string(),
                    index,
                    needed: bytes.len(),
                    capacity: size,
                    data_type: data_type.name(),
                }
                .into());
            }
            out.extend_from_slice(&bytes);
            out.resize(out.len() + size - bytes.len(), 0);
        }
        Ok(out)
    }

    fn vlen_codec(&self) -> &'static str {
        vlen::codec_name(&self.data_type()).unwrap_or("vlen")
    }

    fn chunk_elements(&self) -> u64 {
        self.chunk_shape().iter().product()
    }

    /// The byte ranges of the items of a decoded chunk (an item list).
    fn item_ranges(&self, list: &[u8], key: &str) -> Result<Vec<std::ops::Range<usize>>, Error> {
        let utf8 = self.data_type() == DataType::String;
        vlen::items(list, self.chunk_elements(), utf8, self.vlen_codec())
            .map_err(|source| Error::Codec { key: key.to_owned(), source })
    }

    /// An item list holding only the fill value.
    pub(super) fn fill_items(&self) -> Result<Vec<u8>, Error> {
        let fill = self.fill_value().as_le_bytes();
        let n = usize::try_from(self.chunk_elements()).unwrap_or(usize::MAX);
        vlen::build(std::iter::repeat_n(fill, n), self.vlen_codec())
            .map_err(|source| Error::Codec { key: self.path.metadata_key(), source })
    }

    /// Whether an item list holds only the fill value.
    pub(super) fn items_are_fill(&self, list: &[u8], key: &str) -> Result<bool, Error> {
        let fill = self.fill_value().as_le_bytes();
        Ok(self.item_ranges(list, key)?.into_iter().all(|r| &list[r] == fill))
    }

    fn read_vlen_unscoped<T: Item>(&self, offset: &[u64], shape: &[u64]) -> Result<Vec<T>, Error> {
        self.check_region(offset, shape)?;
        let elements: u128 = shape.iter().map(|&s| u128::from(s)).product();
        let n = usize::try_from(elements)
            .ok()
            .filter(|n| n.checked_mul(std::mem::size_of::<T>()).is_some_and(|b| b <= isize::MAX as usize))
            .ok_or_else(|| ArrayError::TooLarge { array: self.path.to_string(), elements })?;
        let mut out = vec![T::from_vlen(self.fill_value().as_le_bytes()); n];
        for part in self.parts(offset, shape) {
            let key = self.chunk_key(&part.coords);
            let Some(list) = self.read_chunk(&part.coords)? else { continue };
            let ranges = self.item_ranges(&list, &key)?;
            let in_chunk = offset_in_cell(&part.lo, &part.coords, self.chunk_shape());
            let in_region: Vec<u64> = part.lo.iter().zip(offset).map(|(l, o)| l - o).collect();
            let src = BoxIn { shape: self.chunk_shape(), start: &in_chunk };
            let dst = BoxIn { shape, start: &in_region };
            region::runs(&src, &dst, &part.size, |s, d, len| {
                for k in 0..len {
                    out[d + k] = T::from_vlen(&list[ranges[s + k].clone()]);
                }
            });
        }
        Ok(out)
    }

    pub(super) fn write_vlen_unscoped<T: Item>(
        &self,
        offset: &[u64],
        shape: &[u64],
        values: &[T],
    ) -> Result<(), Error> {
        self.check_region(offset, shape)?;
        let expected: u64 = shape.iter().product();
        if values.len() as u64 != expected {
            return Err(
                ArrayError::ItemCount { array: self.path.to_string(), expected, given: values.len() as u64 }.into()
            );
        }
        let values: Vec<Cow<'_, [u8]>> = values.iter().map(Item::vlen_bytes).collect();
        for part in self.parts(offset, shape) {
            let key = self.chunk_key(&part.coords);
            let in_chunk = offset_in_cell(&part.lo, &part.coords, self.chunk_shape());
            let in_region: Vec<u64> = part.lo.iter().zip(offset).map(|(l, o)| l - o).collect();
            let src = BoxIn { shape, start: &in_region };
            let dst = BoxIn { shape: self.chunk_shape(), start: &in_chunk };
            let patch = |base: &[u8]| -> Result<Vec<u8>, Error> {
                let ranges = self.item_ranges(base, &key)?;
                let mut items: Vec<&[u8]> = ranges.into_iter().map(|r| &base[r]).collect();
                region::runs(&src, &dst, &part.size, |s, d, len| {
                    for k in 0..len {
                        items[d + k] = &values[s + k];
                    }
                });
                vlen::build(items.into_iter(), self.vlen_codec())
                    .map_err(|source| Error::Codec { key: key.clone(), source })
            };
            if self.covers(&part) {
                let chunk = patch(&self.fill_items()?)?;
                self.store_chunk_if_unchanged(&key, None, chunk)?;
                continue;
            }
            // A read-modify-write, retried when another writer stored the chunk meanwhile.
            loop {
                let seen = chunk_sync::seen(&self.synchronizer, self.store.chunk_versions(Sealed::new()), &key);
                let (base, read) = match self.read_chunk_for_update(&key)? {
                    Some(found) => found,
                    None => (self.fill_items()?, None),
                };
                if self.store_chunk_if_unchanged(&key, seen.map(|v| (v, read)), patch(&base)?)? {
                    break;
                }
            }
        }
        Ok(())
    }

    /// `stored` (an item list) with everything outside the box `0..kept` reset to the fill value.
    pub(super) fn trim_items(&self, stored: &[u8], kept: &[u64], key: &str) -> Result<Vec<u8>, Error> {
        let ranges = self.item_ranges(stored, key)?;
        let fill = self.fill_value().as_le_bytes();
        let mut items: Vec<&[u8]> = vec![fill; ranges.len()];
        let zero = vec![0; kept.len()];
        let whole = BoxIn { shape: self.chunk_shape(), start: &zero };
        region::runs(&whole, &whole, kept, |s, d, len| {
            for k in 0..len {
                items[d + k] = &stored[ranges[s + k].clone()];
            }
        });
        vlen::build(items.into_iter(), self.vlen_codec()).map_err(|source| Error::Codec { key: key.to_owned(), source })
    }
}
