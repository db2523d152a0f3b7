//! A redb file whose data pages are damaged after it was written: `zarrdb check` (which verifies
//! every page on open) fails with one line and exit status 1, and the library opened without that
//! check answers reads with values or errors, never a panic.

use std::process::Command;

use zarrdb::{Array, ArrayMetadata, DataType, Database};

/// How the file is damaged: every 4 KiB page past the header, or a single page in the data.
const PATTERNS: [Damage; 2] = [Damage::EveryPage, Damage::OnePage];

#[derive(Clone, Copy, Debug)]
enum Damage {
    EveryPage,
    OnePage,
}

/// A database with a few arrays of incompressible chunks, then damaged.
fn damaged(path: &std::path::Path, damage: Damage) {
    {
        let db = Database::create(path).unwrap();
        for name in ["a", "b", "c"] {
            let a = Array::create(
                db.store(),
                &format!("/{name}"),
                ArrayMetadata::new(DataType::UInt64, vec![4096], vec![512]),
            )
            .unwrap();
            let values: Vec<u64> = (0..4096u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
            a.write_region(&[0], &[4096], &values).unwrap();
        }
    }
    let mut bytes = std::fs::read(path).unwrap();
    match damage {
        Damage::EveryPage => (8192 + 100..bytes.len()).step_by(4096).for_each(|at| bytes[at] ^= 0x5A),
        Damage::OnePage => {
            // The page holding element 1000 of the arrays' chunks: a page known to be in use.
            let needle = 1000u64.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes();
            let at = bytes.windows(8).position(|w| w == needle).expect("chunk bytes are stored as written");
            bytes[at..at + 64].iter_mut().for_each(|b| *b ^= 0xFF);
        }
    }
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn check_reports_damaged_pages_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for damage in PATTERNS {
        let path = dir.path().join(format!("{damage:?}.zarrdb"));
        damaged(&path, damage);
        let out = Command::new(env!("CARGO_BIN_EXE_zarrdb")).arg("check").arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{damage:?}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{damage:?}: {err}");
        assert!(err.starts_with("zarrdb: error: "), "{err}");
    }
}

#[test]
fn reads_of_damaged_pages_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    for damage in PATTERNS {
        let path = dir.path().join(format!("{damage:?}.zarrdb"));
        damaged(&path, damage);
        reads_answer(&path, damage);
    }
}

fn reads_answer(path: &std::path::Path, damage: Damage) {
    let outcome = std::panic::catch_unwind(|| {
        let Ok(db) = Database::open(path) else { return 0 };
        let mut errors = 0;
        for name in ["a", "b", "c"] {
            match Array::open(db.store(), &format!("/{name}")).and_then(|a| a.read_all::<u64>()) {
                Ok(values) => assert_eq!(values.len(), 4096),
                Err(_) => errors += 1,
            }
        }
        errors
    });
    assert!(outcome.is_ok(), "{damage:?}: a damaged redb file made zarrdb panic");
}
