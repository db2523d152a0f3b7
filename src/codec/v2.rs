//! How a codec reads the Zarr v2 (and v1, and 2020 draft) objects that name it by its numcodecs
//! id: a v2 `compressor`, or an entry of v2 `filters`. Each codec that has a v2 form says so in
//! its registration ([`V2`]); `transfer::plan` finds it through `registry::find_v2` and builds
//! the v3 codec from the parameters here, so the mapping of a codec lives with the codec.

use serde_json::{Map, Value};

use crate::error::PlanError;
use crate::metadata::json::{describe, join, wrong_type};
use crate::metadata::{DataType, NamedConfig};

/// The v3 codec of a numcodecs object's parameters (its members less `id`), for an array of
/// the given data type.
pub(crate) type FromV2 = fn(&Params<'_>, &DataType) -> Result<NamedConfig, PlanError>;

/// A codec's v2 form.
#[derive(Clone, Copy, Debug)]
pub(crate) struct V2 {
    /// The numcodecs id.
    pub id: &'static str,
    /// As the `compressor` of a v2 array (`compression` of v1, the draft's `compressor`).
    pub compressor: Option<FromV2>,
    /// As an entry of a v2 array's `filters`.
    pub filter: Option<Filter>,
}

/// How a v2 filter becomes a v3 codec.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Filter {
    /// An element filter (a v3 array -> array codec under `numcodecs.<id>`, its parameters kept):
    /// the parameters that name the numpy type it reads and the one it writes.
    /// `no_byte_order`: its output elements have none (packbits' bytes of bits).
    Element { input: Option<&'static str>, output: Option<&'static str>, no_byte_order: bool },
    /// A filter on the bytes (a v3 bytes -> bytes codec before the compressor).
    Bytes(FromV2),
}

/// A numcodecs object's parameters, with errors that name the document and member.
pub(crate) struct Params<'a> {
    pub params: &'a Map<String, Value>,
    /// The document's key.
    pub key: &'a str,
    /// The member that holds the parameters (`compressor`, `filters[0]`...).
    pub field: &'a str,
}

impl Params<'_> {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.params.get(name)
    }

    /// Unknown parameters may change the stream, so they are refused rather than dropped.
    pub fn only(&self, allowed: &[&str]) -> Result<(), PlanError> {
        match self.params.iter().find(|(name, _)| !allowed.contains(&name.as_str())) {
            Some((name, value)) => Err(PlanError::unsupported(
                self.key,
                &join(self.field, name),
                describe(value),
                "not a parameter zarrdb knows for this compressor",
            )),
            None => Ok(()),
        }
    }

    pub fn wrong_type(&self, name: &str, expected: &'static str, value: &Value) -> PlanError {
        PlanError::metadata(self.key, wrong_type(&join(self.field, name), expected, value))
    }

    /// An unsupported value of the parameter `name`.
    pub fn unsupported(&self, name: &str, value: &Value, reason: &str) -> PlanError {
        PlanError::unsupported(self.key, &join(self.field, name), describe(value), reason)
    }

    /// The codec `name` with the parameters as its configuration, `allowed` checked.
    pub fn kept(&self, name: &str, allowed: &[&str]) -> Result<NamedConfig, PlanError> {
        self.only(allowed)?;
        Ok(NamedConfig::with_configuration(name, self.params.clone()))
    }

    /// The codec `name` with one parameter, `default` when absent.
    pub fn single(&self, name: &str, member: &str, default: Value) -> Result<NamedConfig, PlanError> {
        self.only(&[member])?;
        let value = self.get(member).cloned().unwrap_or(default);
        Ok(NamedConfig::with_configuration(name, [(member.to_owned(), value)].into_iter().collect()))
    }
}
