//! Zip archives: a reader that treats every archive as untrusted and a streaming writer.
#![expect(dead_code, reason = "used by import and export, which are being built")]
