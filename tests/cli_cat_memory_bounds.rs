//! `cat` of hostile arrays within a fixed memory budget (issue 40). The JSON outputs capped
//! elements, not bytes: 2^24 `fixed_length_utf32` elements of 128 KiB each (under the element
//! cap) made `cat` allocate 2 TiB, and a `[2^63, 2^63]` array of one-element chunks aborted
//! allocating gigabytes. Each command here runs under a 512 MiB heap cap (`prlimit --data`, which
//! counts the allocator's mappings) and must end with a clear error (status 3) or stream: the
//! streamed outputs are read for a while (well past what a slab of the old size held for the
//! tiny chunks, and 256 MiB of the large elements) and then the pipe is closed, which ends `cat`
//! quietly.

use std::io::Read;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

const HEAP_CAP: u64 = 512 << 20;

fn cat(locator: &str, args: &[&str]) -> Command {
    let mut command = Command::new("prlimit");
    command.arg(format!("--data={HEAP_CAP}")).arg("--").arg(env!("CARGO_BIN_EXE_zarrdb"));
    command.args(["cat", locator, "/"]).args(args);
    command
}

/// The command fails cleanly: status 3, the message naming the JSON limit.
fn refused(locator: &str, args: &[&str]) {
    let out = cat(locator, args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "cat {args:?}: {out:?}");
    assert!(stderr.contains("too many to print as JSON"), "cat {args:?}: {stderr}");
}

/// The command streams: `streamed` bytes arrive, each `byte` (after a header of `skip` bytes),
/// and it ends with status 0 once the pipe closes.
fn streams(locator: &str, args: &[&str], skip: usize, byte: u8, streamed: usize) {
    let mut child = cat(locator, args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut buffer = vec![0u8; 1 << 20];
    let mut seen = 0;
    while seen < streamed {
        let n = stdout.read(&mut buffer).unwrap();
        assert!(n > 0, "cat {args:?} ended after {seen} bytes: {:?}", child.wait_with_output());
        let start = skip.saturating_sub(seen).min(n);
        assert!(buffer[start..n].iter().all(|&b| b == byte), "cat {args:?}: a byte other than {byte}");
        seen += n;
    }
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "cat {args:?}: {out:?}");
}

fn folder(dir: &std::path::Path, doc: Value) -> String {
    std::fs::write(dir.join("zarr.json"), serde_json::to_vec(&doc).unwrap()).unwrap();
    format!("dir:{}", dir.display())
}

#[test]
fn text_of_128_kib_elements() {
    let dir = tempfile::tempdir().unwrap();
    let locator = folder(
        dir.path(),
        json!({"zarr_format": 3, "node_type": "array", "shape": [1u64 << 24],
            "data_type": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 131072}},
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": "",
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}),
    );
    refused(&locator, &[]);
    refused(&locator, &["--json"]);
    // A region within the limits prints, read a slab at a time.
    let out = cat(&locator, &["--json", "--region", "100:2148"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap(), json!(vec![""; 2048]));
    streams(&locator, &["--raw"], 0, 0, 256 << 20);
    streams(&locator, &["--npy"], 128, 0, 256 << 20);
}

#[test]
fn a_shape_of_two_to_the_63_squared() {
    let dir = tempfile::tempdir().unwrap();
    let locator = folder(
        dir.path(),
        json!({"zarr_format": 3, "node_type": "array", "shape": [1u64 << 63, 1u64 << 63], "data_type": "uint8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1, 1]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 5, "codecs": [{"name": "bytes"}]}),
    );
    refused(&locator, &[]);
    refused(&locator, &["--json"]);
    let out = cat(&locator, &["--json", "--region", "7,-3:"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[5,5,5]\n");
    // One chunk per byte: the old 64 MiB slab was 2^26 chunks, each with its own record.
    streams(&locator, &["--raw"], 0, 5, 256 << 10);
    streams(&locator, &["--npy"], 128, 5, 256 << 10);
}
