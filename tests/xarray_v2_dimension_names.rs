//! A Zarr v2 dataset written by xarray keeps its dimension names through import and a v3 export:
//! `_ARRAY_DIMENSIONS` becomes `dimension_names` (which xarray requires in v3) and leaves the
//! attributes, so `xarray.open_zarr` of the export is identical to the dataset written.

#[path = "common/xarray.rs"]
mod xarray;

use xarray::{export, import, json, write_dataset};
use zarrdb::{Array, ExportOptions};

#[test]
fn v2_dimension_names_survive_a_v3_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let source = write_dataset(dir.path(), "v2.zarr", 2);
    let (db, report) = import(dir.path(), &source);
    assert_eq!(report.layout, "Zarr v2");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);

    let temperature = Array::open(db.store(), "/temperature").unwrap();
    let names = temperature.metadata().dimension_names.clone();
    assert_eq!(names, Some(vec![Some("time".to_owned()), Some("x".to_owned())]));
    assert!(!temperature.metadata().attributes.contains_key("_ARRAY_DIMENSIONS"));
    assert_eq!(temperature.metadata().attributes["units"], "K", "other attributes stay");

    let exported = export(&db, dir.path(), "v3.zarr", &ExportOptions::default());
    for name in ["temperature", "pressure", "mask", "time", "x"] {
        let doc = json(&exported, &format!("{name}/zarr.json"));
        assert!(doc["dimension_names"].is_array(), "{name}: {doc}");
        assert!(doc["attributes"].get("_ARRAY_DIMENSIONS").is_none(), "{name}: {doc}");
    }
    xarray::xarray(&["identical", &exported]);
}
