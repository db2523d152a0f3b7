//! The units of NumPy's `datetime64` and `timedelta64`, as zarr-python names them in the
//! `numpy.datetime64` / `numpy.timedelta64` data types and in Zarr v2 type strings (`<M8[ns]`).

use std::fmt;

/// The unit of a time data type: one tick is `scale_factor` of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TimeUnit {
    /// `Y`
    Year,
    /// `M`
    Month,
    /// `W`
    Week,
    /// `D`
    Day,
    /// `h`
    Hour,
    /// `m`
    Minute,
    /// `s`
    Second,
    /// `ms`
    Millisecond,
    /// `us` (NumPy also spells it `μs`)
    Microsecond,
    /// `ns`
    Nanosecond,
    /// `ps`
    Picosecond,
    /// `fs`
    Femtosecond,
    /// `as`
    Attosecond,
    /// `generic`: a count without a unit (NumPy's unitless `M8` / `m8`).
    Generic,
}

impl TimeUnit {
    const ALL: [TimeUnit; 14] = [
        TimeUnit::Year,
        TimeUnit::Month,
        TimeUnit::Week,
        TimeUnit::Day,
        TimeUnit::Hour,
        TimeUnit::Minute,
        TimeUnit::Second,
        TimeUnit::Millisecond,
        TimeUnit::Microsecond,
        TimeUnit::Nanosecond,
        TimeUnit::Picosecond,
        TimeUnit::Femtosecond,
        TimeUnit::Attosecond,
        TimeUnit::Generic,
    ];

    /// The unit's name as NumPy and zarr-python write it.
    ///
    /// ```
    /// assert_eq!(zarrdb::metadata::TimeUnit::Nanosecond.name(), "ns");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::Year => "Y",
            TimeUnit::Month => "M",
            TimeUnit::Week => "W",
            TimeUnit::Day => "D",
            TimeUnit::Hour => "h",
            TimeUnit::Minute => "m",
            TimeUnit::Second => "s",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Microsecond => "us",
            TimeUnit::Nanosecond => "ns",
            TimeUnit::Picosecond => "ps",
            TimeUnit::Femtosecond => "fs",
            TimeUnit::Attosecond => "as",
            TimeUnit::Generic => "generic",
        }
    }

    /// The unit named `name` (`μs` is read as `us`); `None` for anything else.
    pub fn from_name(name: &str) -> Option<TimeUnit> {
        if name == "μs" {
            return Some(TimeUnit::Microsecond);
        }
        TimeUnit::ALL.into_iter().find(|u| u.name() == name)
    }
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
