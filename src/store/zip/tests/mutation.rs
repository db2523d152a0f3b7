//! Random damage to valid archives (plain and Zip64, stored and deflated): opening and reading
//! may fail, but never panic, and whatever is read still matches its CRC and size.

use std::sync::OnceLock;

use proptest::prelude::*;

use super::{build, crc32, open_bytes, Raw};
use crate::store::zip::{ZipLimits, ZipWriter};

/// Every entry of the archives below; names are unique across both.
const CONTENTS: [(&str, &[u8]); 5] = [
    ("zarr.json", b"{\"zarr_format\": 3}"),
    ("c/0/0", &[9; 700]),
    ("c/0/1", b"short"),
    ("meta.json", b"{}"),
    ("c/0", &[1; 64]),
];

/// The archives to damage: one hand-built with deflated entries, one from the writer with Zip64
/// records forced.
fn originals() -> &'static [Vec<u8>; 2] {
    static ORIGINALS: OnceLock<[Vec<u8>; 2]> = OnceLock::new();
    ORIGINALS.get_or_init(|| {
        let [(n0, d0), (n1, d1), (n2, d2), (n3, d3), (n4, d4)] = CONTENTS;
        let deflated = build(&[Raw::stored(n0, d0), Raw::deflated(n1, d1), Raw::deflated(n2, d2)]);
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("zip64.zip");
        let mut writer = ZipWriter::create_forcing_zip64(&path).expect("create");
        writer.add(n3, d3).expect("add");
        writer.add(n4, d4).expect("add");
        writer.finish().expect("finish");
        [deflated, std::fs::read(&path).expect("read")]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn damaged_archives_never_panic(
        which in 0usize..2,
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        cut in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let mut bytes = originals()[which].clone();
        for (at, value) in flips {
            let at = at.index(bytes.len());
            bytes[at] = value;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len()));
        }
        if let Ok(entries) = open_bytes(&bytes, ZipLimits::default()) {
            // Damage that slips through (a comment, an unused field) must not change an entry's
            // bytes: the CRC check stands between a damaged entry and the caller.
            for (name, data) in entries {
                if let Some((_, original)) = CONTENTS.iter().find(|(n, _)| *n == name) {
                    prop_assert_eq!(crc32(&data), crc32(original), "entry {}", name);
                }
            }
        }
    }
}
