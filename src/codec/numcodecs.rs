//! The numcodecs filters and compressors zarr-python 3 names `numcodecs.<id>`, one module each
//! (`delta.rs`, `fixedscaleoffset.rs`, `quantize.rs`, `bitround.rs`, `astype.rs`, `packbits.rs`,
//! `shuffle.rs`, `lz4.rs`, `bz2.rs`, `lzma.rs`, `zlib.rs`, `checksum32.rs`), registered like every
//! other codec (`registry.rs`). Zarr v2 `filters` and `compressor` objects are imported as these
//! (see `transfer::plan::filters`). This module holds their shared tests.

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::codec::{ChunkSpec, CodecChain};
    use crate::metadata::{DataType, FillValue, NamedConfig};

    fn chain(codecs: Value, data_type: DataType, fill: FillValue) -> CodecChain {
        let spec = ChunkSpec { shape: vec![4, 5], data_type, fill_value: fill };
        CodecChain::from_metadata(&NamedConfig::parse_list(&codecs).unwrap(), &spec).unwrap()
    }

    #[test]
    fn absent_dtypes_and_element_sizes_are_the_arrays_as_in_zarr_python() {
        let le = json!({"name": "bytes", "configuration": {"endian": "little"}});
        let c = chain(
            json!([{"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 1, "scale": 2}}, le,
                   {"name": "numcodecs.shuffle"}]),
            DataType::Float64,
            FillValue::zero(DataType::Float64),
        );
        let meta = c.to_metadata();
        assert_eq!(meta[0].configuration.as_ref().unwrap()["dtype"], "<f8");
        assert_eq!(meta[2].configuration.as_ref().unwrap()["elementsize"], 8);
        let data: Vec<u8> = (0..20).flat_map(|i| (f64::from(i) * 0.5).to_le_bytes()).collect();
        assert_eq!(c.decode(c.encode(&data[..]).unwrap()).unwrap(), data);
    }

    #[test]
    fn a_type_changing_filter_inside_shards_keeps_the_fill_value() {
        let fill = FillValue::from_le_bytes(1000.5f64.to_le_bytes().to_vec());
        let inner = json!([{"name": "numcodecs.fixedscaleoffset",
                            "configuration": {"offset": 1000, "scale": 10, "dtype": "<f8", "astype": "<i2"}},
                           {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.lz4"}]);
        let c = chain(
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 5], "codecs": inner,
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]),
            DataType::Float64,
            fill,
        );
        // The first inner chunk is all fill, the second holds values on the scale's grid.
        let mut data: Vec<u8> = std::iter::repeat_n(1000.5f64, 10).flat_map(f64::to_le_bytes).collect();
        data.extend((0..10).flat_map(|i| (990.0 + f64::from(i) * 0.1).to_le_bytes()));
        let decoded = c.decode(c.encode(&data[..]).unwrap()).unwrap();
        let values: Vec<f64> = decoded.chunks(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
        for (i, v) in values.iter().enumerate() {
            let want = if i < 10 { 1000.5 } else { 990.0 + (i - 10) as f64 * 0.1 };
            assert!((v - want).abs() < 1e-9, "element {i}: {v} != {want}");
        }
    }
}
