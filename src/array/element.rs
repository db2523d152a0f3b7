//! Rust element types for typed region I/O.

use half::{bf16, f16};
use num_complex::Complex;

use crate::metadata::DataType;

/// A Rust type that can hold the elements of an array of a matching [`DataType`].
///
/// Raw (`r<N>`) arrays have no element type: use the `*_bytes` region methods.
pub trait Element: Copy + Send + Sync + 'static {
    /// The data type this Rust type matches (for [`Time`], one of the data types it matches).
    const DATA_TYPE: DataType;

    /// Whether this Rust type holds the elements of `data_type`.
    fn matches(data_type: DataType) -> bool {
        data_type == Self::DATA_TYPE
    }

    /// Decode little-endian element bytes (length a multiple of the element size).
    fn from_le_bytes(bytes: &[u8]) -> Vec<Self>;

    /// Encode elements as little-endian bytes.
    fn to_le_bytes(values: &[Self]) -> Vec<u8>;
}

macro_rules! numeric_element {
    ($($ty:ty => $dt:ident),* $(,)?) => {$(
        impl Element for $ty {
            const DATA_TYPE: DataType = DataType::$dt;

            fn from_le_bytes(bytes: &[u8]) -> Vec<Self> {
                bytes
                    .chunks_exact(std::mem::size_of::<$ty>())
                    .map(|b| <$ty>::from_le_bytes(b.try_into().expect("chunks_exact yields full elements")))
                    .collect()
            }

            fn to_le_bytes(values: &[Self]) -> Vec<u8> {
                values.iter().flat_map(|v| v.to_le_bytes()).collect()
            }
        }
    )*};
}

numeric_element! {
    i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64,
    u8 => UInt8, u16 => UInt16, u32 => UInt32, u64 => UInt64,
    f16 => Float16, bf16 => BFloat16, f32 => Float32, f64 => Float64,
}

impl Element for bool {
    const DATA_TYPE: DataType = DataType::Bool;

    fn from_le_bytes(bytes: &[u8]) -> Vec<Self> {
        // Any non-zero byte reads as true, as numpy does; bytes are never reinterpreted as bool.
        bytes.iter().map(|&b| b != 0).collect()
    }

    fn to_le_bytes(values: &[Self]) -> Vec<u8> {
        values.iter().map(|&v| u8::from(v)).collect()
    }
}

macro_rules! complex_element {
    ($($part:ty => $dt:ident),*) => {$(
        impl Element for Complex<$part> {
            const DATA_TYPE: DataType = DataType::$dt;

            fn from_le_bytes(bytes: &[u8]) -> Vec<Self> {
                let parts = <$part as Element>::from_le_bytes(bytes);
                parts.chunks_exact(2).map(|p| Complex::new(p[0], p[1])).collect()
            }

            fn to_le_bytes(values: &[Self]) -> Vec<u8> {
                values.iter().flat_map(|c| [c.re.to_le_bytes(), c.im.to_le_bytes()].concat()).collect()
            }
        }
    )*};
}

complex_element!(f32 => Complex64, f64 => Complex128);

/// One element of a `numpy.datetime64` or `numpy.timedelta64` array: a count of the array's ticks
/// (`scale_factor` times `unit`, both in the array's [`DataType`]); [`Time::NAT`] is NumPy's NaT.
///
/// ```
/// use std::sync::Arc;
/// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};
/// use zarrdb::array::Time;
/// use zarrdb::metadata::TimeUnit;
/// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
/// let ns = DataType::DateTime64 { unit: TimeUnit::Nanosecond, scale_factor: 1 };
/// let a = Array::create(store, "/t", ArrayMetadata::new(ns, vec![2], vec![2]))?;
/// a.write_region(&[0], &[2], &[Time(1_000_000_000), Time::NAT])?;
/// assert_eq!(a.read_all::<Time>()?, vec![Time(1_000_000_000), Time::NAT]);
/// # Ok::<(), zarrdb::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Time(pub i64);

impl Time {
    /// Not-a-Time, NumPy's missing value for times (`i64::MIN`).
    pub const NAT: Time = Time(i64::MIN);

    /// Whether this is NaT.
    pub fn is_nat(self) -> bool {
        self == Time::NAT
    }
}

impl Element for Time {
    const DATA_TYPE: DataType = DataType::DateTime64 { unit: crate::metadata::TimeUnit::Nanosecond, scale_factor: 1 };

    fn matches(data_type: DataType) -> bool {
        matches!(data_type, DataType::DateTime64 { .. } | DataType::TimeDelta64 { .. })
    }

    fn from_le_bytes(bytes: &[u8]) -> Vec<Self> {
        <i64 as Element>::from_le_bytes(bytes).into_iter().map(Time).collect()
    }

    fn to_le_bytes(values: &[Self]) -> Vec<u8> {
        values.iter().flat_map(|t| t.0.to_le_bytes()).collect()
    }
}
