//! `zarrdb::copy` between two plain stores converts a Zarr v2 hierarchy on the way, as an import
//! does: a v2 group with an F-order, zlib-compressed array in one memory store becomes v3 in
//! another, with the chunk bytes and keys unchanged, and reads back the same values.

use std::io::Write;
use std::sync::Arc;

use zarrdb::{Array, Group, ImportOptions, MemoryStore, Store};

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(1));
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn copy_converts_a_v2_hierarchy() {
    let from: Arc<dyn Store> = Arc::new(MemoryStore::new());
    from.set(".zgroup", br#"{"zarr_format": 2}"#).unwrap();
    from.set(".zattrs", br#"{"site": "north"}"#).unwrap();
    let zarray = br#"{"zarr_format": 2, "shape": [3, 4], "chunks": [3, 2], "dtype": "<i2",
        "compressor": {"id": "zlib", "level": 1}, "fill_value": null, "order": "F", "filters": null}"#;
    from.set("t/.zarray", zarray).unwrap();
    // Values v[r][c] = 10 r + c; each chunk holds columns 2k..2k+2 in Fortran order.
    for k in 0..2u16 {
        let mut raw = Vec::new();
        for c in 2 * k..2 * k + 2 {
            for r in 0..3u16 {
                raw.extend_from_slice(&((10 * r + c) as i16).to_le_bytes());
            }
        }
        from.set(&format!("t/0.{k}"), &zlib(&raw)).unwrap();
    }
    let to: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let report = zarrdb::copy(from.clone(), to.clone(), &ImportOptions::default().at("/legacy")).unwrap();
    assert_eq!((report.layout, report.nodes, report.chunks), ("Zarr v2", 2, 2));
    let values = Array::open(to.clone(), "/legacy/t").unwrap().read_all::<i16>().unwrap();
    assert_eq!(values, (0..3).flat_map(|r| (0..4).map(move |c| 10 * r + c)).collect::<Vec<i16>>());
    assert_eq!(Group::open(to.clone(), "/legacy").unwrap().attributes()["site"], "north");
    for k in 0..2 {
        assert_eq!(to.get(&format!("legacy/t/0.{k}")).unwrap(), from.get(&format!("t/0.{k}")).unwrap());
    }
}
