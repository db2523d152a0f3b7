//! Interoperability with Python's zipfile (what zarr-python's ZipStore uses): it reads what we
//! write, and we read what it writes, duplicates and Zip64 included. The interpreter comes from
//! `ZARRDB_PYTHON`, else `python3` (zipfile is in the standard library).

use std::path::Path;
use std::process::Command;

use super::{read_all, write_archive};
use crate::store::zip::{Method, ZipLimits, ZipReader, ZipWriter};

fn python(script: &str, args: &[&Path]) -> String {
    let python = std::env::var_os("ZARRDB_PYTHON").unwrap_or_else(|| "python3".into());
    let output = Command::new(&python)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.to_string_lossy()));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "python failed: {stderr}");
    String::from_utf8(output.stdout).expect("python prints UTF-8")
}

/// What Python's zipfile reads from the archive at `path`, after `testzip()` checked every CRC.
fn python_reads(path: &Path) -> Vec<(String, Vec<u8>)> {
    let script = "import json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    assert z.testzip() is None, z.testzip()
    print(json.dumps([[i.filename, z.read(i).hex()] for i in z.infolist()]))";
    let listing: Vec<(String, String)> = serde_json::from_str(&python(script, &[path])).expect("python's JSON");
    listing.into_iter().map(|(name, hex)| (name, unhex(&hex))).collect()
}

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex")).collect()
}

#[test]
fn python_reads_what_we_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let entries: &[(&str, &[u8])] = &[
        ("zarr.json", b"{\"zarr_format\": 3}"),
        ("empty", b""),
        ("données/c/0", &[0xAB; 1000]),
        ("日本/zarr.json", b"{}"),
    ];
    let expected: Vec<(String, Vec<u8>)> = entries.iter().map(|(n, d)| ((*n).to_owned(), d.to_vec())).collect();
    assert_eq!(python_reads(&write_archive(dir.path(), "plain.zip", entries)), expected);

    let forced = dir.path().join("forced.zip");
    let mut writer = ZipWriter::create_forcing_zip64(&forced).expect("create");
    for (name, data) in entries {
        writer.add(name, data).expect("add");
    }
    writer.finish().expect("finish");
    assert_eq!(python_reads(&forced), expected);
}

#[test]
fn python_reads_our_zip64_archive_of_70000_entries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("many.zip");
    let mut writer = ZipWriter::create(&path, &path).expect("create");
    let expected: Vec<(String, Vec<u8>)> =
        (0..70_000u32).map(|i| (format!("c/{i}"), i.to_le_bytes().to_vec())).collect();
    for (name, data) in &expected {
        writer.add(name, data).expect("add");
    }
    writer.finish().expect("finish");
    assert_eq!(python_reads(&path), expected);
}

#[test]
fn we_read_what_python_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    // ZipStore writes a key twice as two entries (zipfile warns, then appends): the last wins.
    let script = "import sys, warnings, zipfile
warnings.simplefilter('ignore')
for path, method in ((sys.argv[1], zipfile.ZIP_STORED), (sys.argv[2], zipfile.ZIP_DEFLATED)):
    with zipfile.ZipFile(path, 'w', compression=method) as z:
        z.writestr('group/', b'')
        z.writestr('group/zarr.json', b'{\"zarr_format\": 3, \"node_type\": \"group\"}')
        z.writestr('group/a/c/0', bytes(range(256)) * 40)
        z.writestr('group/café', b'accent')
        z.writestr('group/zarr.json', b'{\"zarr_format\": 3, \"node_type\": \"group\", \"attributes\": {}}')
        with z.open('group/forced', 'w', force_zip64=True) as f:
            f.write(b'local zip64 extra')
with zipfile.ZipFile(sys.argv[3], 'w') as z:
    for i in range(70000):
        z.writestr(f'c/{i}', i.to_bytes(4, 'little'))";
    let (stored, deflated, many) =
        (dir.path().join("stored.zip"), dir.path().join("deflated.zip"), dir.path().join("many.zip"));
    python(script, &[&stored, &deflated, &many]);
    let expected = vec![
        ("group/a/c/0".to_owned(), (0..=255u8).collect::<Vec<u8>>().repeat(40)),
        ("group/café".to_owned(), b"accent".to_vec()),
        ("group/zarr.json".to_owned(), b"{\"zarr_format\": 3, \"node_type\": \"group\", \"attributes\": {}}".to_vec()),
        ("group/forced".to_owned(), b"local zip64 extra".to_vec()),
    ];
    for (path, method) in [(&stored, Method::Stored), (&deflated, Method::Deflated)] {
        let reader = ZipReader::open(path, ZipLimits::default()).expect("open");
        assert_eq!(reader.duplicates(), ["group/zarr.json"]);
        assert_eq!(reader.entries()[0].method, method);
        assert_eq!(read_all(path).expect("read"), expected, "{}", path.display());
    }
    let read = read_all(&many).expect("read");
    assert_eq!(read.len(), 70_000);
    assert_eq!(read[69_999], ("c/69999".to_owned(), 69_999u32.to_le_bytes().to_vec()));
}
