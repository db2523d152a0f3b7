//! A metadata document above `MAX_DOCUMENT_BYTES` (256 MiB, docs/format.md) is refused before it
//! is read wherever the store knows its size, and before it is parsed everywhere: a 300 MiB
//! `zarr.json`, in a folder or stored in a zip, ends `zarrdb tree`, `info` and `check` with a
//! clean error within a heap far smaller than the document (parsing took four times its size).
//! The documents are sparse files: their bytes are never read, so they need not be JSON.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::process::Command;

const DOCUMENT_BYTES: u64 = 300 << 20;

/// Run a read command with a 128 MiB heap: it must fail cleanly, naming the limit.
fn refused(locator: &str) {
    for command in ["tree", "info", "check"] {
        let out = Command::new("prlimit")
            .arg(format!("--data={}", 128 << 20))
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_zarrdb"))
            .args([command, locator])
            .output()
            .unwrap();
        let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        // `check` fails (1) on a store it cannot open; the others report an error (3).
        let expected = if command == "check" { 1 } else { 3 };
        assert_eq!(out.status.code(), Some(expected), "{command} {locator}: {out:?}");
        assert!(all.contains("larger than the 268435456 bytes zarrdb parses"), "{command} {locator}: {all}");
    }
}

#[test]
fn an_absurd_zarr_json_in_a_folder_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    File::create(dir.path().join("zarr.json")).unwrap().set_len(DOCUMENT_BYTES).unwrap();
    refused(&format!("dir:{}", dir.path().display()));
}

#[test]
fn an_absurd_zarr_json_stored_in_a_zip_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.zip");
    write_sparse_zip(&path, b"zarr.json", DOCUMENT_BYTES);
    refused(&path.display().to_string());
}

/// A zip with one stored entry of `size` zero bytes, left as a hole in the file.
fn write_sparse_zip(path: &Path, name: &[u8], size: u64) {
    let mut crc = flate2::Crc::new();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..size >> 20 {
        crc.update(&zeros);
    }
    let header = |signature: u32, central: bool| {
        let mut h = signature.to_le_bytes().to_vec();
        if central {
            h.extend(20u16.to_le_bytes()); // made by
        }
        h.extend(20u16.to_le_bytes()); // needed
        h.extend(0u16.to_le_bytes()); // flags
        h.extend(0u16.to_le_bytes()); // stored
        h.extend(0u32.to_le_bytes()); // time, date
        h.extend(crc.sum().to_le_bytes());
        h.extend((size as u32).to_le_bytes()); // compressed
        h.extend((size as u32).to_le_bytes()); // uncompressed
        h.extend((name.len() as u16).to_le_bytes());
        h.extend(0u16.to_le_bytes()); // extra
        if central {
            h.extend([0u8; 10]); // comment length, disk, internal and external attributes
            h.extend(0u32.to_le_bytes()); // local header offset
        }
        h.extend(name);
        h
    };
    let mut file = File::create(path).unwrap();
    let local = header(0x0403_4b50, false);
    file.write_all(&local).unwrap();
    file.seek(SeekFrom::Current(size as i64)).unwrap();
    let central = header(0x0201_4b50, true);
    file.write_all(&central).unwrap();
    let mut end = 0x0605_4b50u32.to_le_bytes().to_vec();
    end.extend([0u8; 4]);
    end.extend(1u16.to_le_bytes());
    end.extend(1u16.to_le_bytes());
    end.extend((central.len() as u32).to_le_bytes());
    end.extend((local.len() as u64 + size).to_le_bytes()[..4].iter());
    end.extend(0u16.to_le_bytes());
    file.write_all(&end).unwrap();
}
