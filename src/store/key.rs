//! Which keys a store accepts. Keys become file names in directory and zip stores, so anything
//! that could escape the store's root or mean different things on different systems is refused.

use crate::error::StoreError;

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
