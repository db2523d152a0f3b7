//! Names from an untrusted source (a folder's file names, a zip's entry names) turned into store
//! keys. Every name must be a plain relative path inside the hierarchy: anything that could reach
//! outside it once written as a file, or that names the same key two ways, is refused, and the
//! whole transfer with it.

use super::check_user_key;
use crate::error::{StoreError, TransferError};

/// Check that `name` is a safe relative key: '/'-separated, no empty, `.` or `..` segment, not
/// absolute, no backslash (a separator on Windows), no NUL or other control character, no drive
/// letter, not zarrdb's reserved prefix.
pub(crate) fn check(source_path: &str, name: &str) -> Result<(), TransferError> {
    let refuse = |reason| TransferError::UnsafeName {
        source_path: source_path.to_owned(),
        name: name.escape_debug().to_string(),
        reason,
    };
    // What every store refuses (empty, absolute, backslash, NUL, `.` and `..` segments) and the
    // reserved prefix, as a database would refuse them; then what only untrusted names need.
    if let Err(e) = check_user_key(name) {
        return Err(refuse(match e {
            StoreError::InvalidKey { reason, .. } => reason,
            _ => "not a valid store key",
        }));
    }
    if name.chars().any(char::is_control) {
        return Err(refuse("a control character"));
    }
    if name.split('/').next().is_some_and(|first| first.len() == 2 && first.ends_with(':')) {
        return Err(refuse("a drive letter"));
    }
    // Work per key grows with its depth (every ancestor is a possible node), so a name of
    // thousands of levels would cost memory and time out of proportion to its bytes.
    if name.len() > MAX_KEY_BYTES {
        return Err(refuse("longer than 4,096 bytes"));
    }
    if name.split('/').count() > MAX_KEY_SEGMENTS {
        return Err(refuse("more than 256 path segments"));
    }
    Ok(())
}

/// Whether a name from an archive or folder is a safe store key (see [`check`]).
pub(crate) fn is_safe(name: &str) -> bool {
    check("", name).is_ok()
}

/// Longest key accepted from a source (LMDB's own limit is about 2,000 bytes).
const MAX_KEY_BYTES: usize = 4096;
/// Deepest key accepted: a 32-dimensional array's chunk keys nested in a deep hierarchy still fit.
const MAX_KEY_SEGMENTS: usize = 256;

/// Refuse keys that are fine on Unix but that Windows would write somewhere else or merge with
/// another name: `:` (drive-relative paths, alternate data streams), device names such as `CON`
/// or `nul.txt`, and names ending in a dot or a space (Windows drops them). Used when writing
/// files on Windows.
#[cfg_attr(
    all(not(windows), not(test)),
    expect(dead_code, reason = "called when exporting to a folder on Windows; tested everywhere")
)]
pub(crate) fn check_windows_file_name(destination: &str, name: &str) -> Result<(), TransferError> {
    let refuse = |reason| TransferError::UnsafeName {
        source_path: destination.to_owned(),
        name: name.escape_debug().to_string(),
        reason,
    };
    const DEVICES: [&str; 22] = [
        "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8", "com9", "lpt1",
        "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
    ];
    for segment in name.split('/') {
        if segment.contains(':') || segment.contains(['<', '>', '"', '|', '?', '*']) {
            return Err(refuse("a character Windows file names cannot hold"));
        }
        if segment.ends_with(['.', ' ']) {
            return Err(refuse("a name ending in a dot or space, which Windows drops"));
        }
        let stem = segment.split('.').next().unwrap_or("").to_ascii_lowercase();
        if DEVICES.contains(&stem.as_str()) {
            return Err(refuse("a Windows device name"));
        }
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
    fn names_windows_would_misplace_are_refused_for_windows_files() {
        for name in ["C:foo/zarr.json", "CON/zarr.json", "a/nul.txt", "a./zarr.json", "a /zarr.json", "x:stream"] {
            assert!(super::check_windows_file_name("dst", name).is_err(), "{name}");
        }
        assert!(super::check_windows_file_name("dst", "group.1/c/0.0").is_ok());
    }

    #[test]
    fn very_long_or_deep_names_are_refused() {
        assert!(check("src", "a/".repeat(300).trim_end_matches('/')).is_err());
        assert!(check("src", &"x".repeat(5000)).is_err());
        assert!(check("src", "a/".repeat(200).trim_end_matches('/')).is_ok());
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
