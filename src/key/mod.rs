//! Keys and names: the one home of the rules for store keys, the keys zarrdb reserves, node paths
//! and names ([`path`]), and names from untrusted sources ([`untrusted`]). The bottom layer with
//! `error`: every other layer checks keys through here.
//!
//! Keys become file names in directory and zip stores, so anything that could escape the store's
//! root or mean different things on different systems is refused.

pub(crate) mod path;
pub(crate) mod untrusted;

use crate::error::StoreError;

/// The store key of a node's metadata document, relative to the node's prefix.
pub const METADATA_KEY: &str = "zarr.json";

/// Keys under this prefix hold zarrdb's own bookkeeping (the format marker, an engine's layout
/// flags). The spec reserves names starting with `__`, so no Zarr node can live there; the
/// database layer keeps users out of it ([`check_user_key`]).
pub(crate) const RESERVED_PREFIX: &str = "__zarrdb/";

/// Check that `key` is a relative `/`-separated path with no empty, `.` or `..` segment, no
/// backslash and no NUL.
pub(crate) fn validate_key(key: &str) -> Result<(), StoreError> {
    let refuse = |reason| Err(StoreError::InvalidKey { key: key.escape_debug().to_string(), reason });
    if key.is_empty() {
        return refuse("empty key");
    }
    if key.starts_with('/') {
        return refuse("absolute path");
    }
    if key.contains('\\') {
        return refuse("backslash");
    }
    if key.contains('\0') {
        return refuse("NUL character");
    }
    for segment in key.split('/') {
        match segment {
            "" => return refuse("empty path segment"),
            "." | ".." => return refuse("'.' or '..' segment"),
            _ => {}
        }
    }
    Ok(())
}

/// [`validate_key`], and refuse user access to the reserved prefix.
pub(crate) fn check_user_key(key: &str) -> Result<(), StoreError> {
    validate_key(key)?;
    if key.starts_with(RESERVED_PREFIX) {
        return Err(StoreError::InvalidKey {
            key: key.to_owned(),
            reason: "the __zarrdb/ prefix is reserved for zarrdb's bookkeeping",
        });
    }
    Ok(())
}
