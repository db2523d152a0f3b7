//! Names from an untrusted source (a folder's file names, a zip's entry names) turned into store
//! keys. Every name must be a plain relative path inside the hierarchy: anything that could reach
//! outside it once written as a file, or that names the same key two ways, is refused, and the
//! whole transfer with it.

use super::error::TransferError;
use crate::db::RESERVED_PREFIX;

/// Check that `name` is a safe relative key: '/'-separated, no empty, `.` or `..` segment, not
/// absolute, no backslash (a separator on Windows), no NUL or other control character, no drive
/// letter, not zarrdb's reserved prefix.
pub(crate) fn check(source_path: &str, name: &str) -> Result<(), TransferError> {
    let refuse = |reason| TransferError::UnsafeName {
        source_path: source_path.to_owned(),
        name: name.escape_debug().to_string(),
        reason,
    };
    if name.is_empty() {
        return Err(refuse("an empty name"));
    }
    if name.starts_with('/') {
        return Err(refuse("an absolute path"));
    }
    if name.contains('\\') {
        return Err(refuse("a backslash, a path separator on Windows"));
    }
    if name.chars().any(char::is_control) {
        return Err(refuse("a NUL or other control character"));
    }
    if name.split('/').next().is_some_and(|first| first.len() == 2 && first.ends_with(':')) {
        return Err(refuse("a drive letter"));
    }
    for segment in name.split('/') {
        match segment {
            "" => return Err(refuse("an empty path segment")),
            "." | ".." => return Err(refuse("a `.` or `..` path segment")),
            _ => {}
        }
    }
    if name.starts_with(RESERVED_PREFIX) {
        return Err(refuse("zarrdb's reserved __zarrdb/ prefix"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn plain_relative_names_pass() {
        for name in ["zarr.json", "a/b/c/0/1", "g/.zattrs", "x..y/0.0", "données/zarr.json"] {
            assert!(check("src", name).is_ok(), "{name}");
        }
    }

    #[test]
    fn every_escaping_or_ambiguous_name_is_refused() {
        let hostile = [
            "",
            "/etc/passwd",
            "../evil",
            "a/../../evil",
            "a/./b",
            "a//b",
            "a/",
            "a\\..\\evil",
            "C:/windows",
            "a\0b",
            "a\nb",
            "__zarrdb/format",
        ];
        for name in hostile {
            assert!(check("src", name).is_err(), "{name:?} was accepted");
        }
    }
}
