//! Rectilinear chunk grids through the Rust API on a database: region writes and reads across
//! chunks of different shapes match a model, each chunk is stored at its own shape, resize and
//! append grow the grid as zarr-python 3.4 does (a shrunk part reads as fill when regrown),
//! elements scattered over chunks land at positions of each chunk's own shape, and what has no
//! rectilinear path yet is refused with `ArrayError::RectilinearUnsupported`.

use zarrdb::error::ArrayError;
use zarrdb::{Array, ArrayMetadata, ChunkElements, Database, Error};

fn metadata(shape: [u64; 2], chunk_shapes: serde_json::Value) -> ArrayMetadata {
    let doc = serde_json::json!({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "int32",
        "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": -1,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
    });
    ArrayMetadata::from_json(doc.to_string().as_bytes()).unwrap()
}

/// Write `value` into the model (row-major `cols` wide) over the box at `offset` of `shape`.
fn patch(model: &mut [i32], cols: u64, offset: [u64; 2], shape: [u64; 2], value: &[i32]) {
    for r in 0..shape[0] {
        for c in 0..shape[1] {
            model[((offset[0] + r) * cols + offset[1] + c) as usize] = value[(r * shape[1] + c) as usize];
        }
    }
}

#[test]
fn rectilinear_arrays_write_read_resize_and_append() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("r.zarrdb")).unwrap();
    // Rows in chunks of 1, 3, 3, 3 and 4 (the last past the end); columns in chunks of 4.
    let mut a = Array::create(db.store(), "/a", metadata([13, 10], serde_json::json!([[1, [3, 3], 4], 4]))).unwrap();
    assert_eq!(a.metadata().grid_shape(), [5, 3]);
    let mut model = vec![-1i32; 130];
    let first: Vec<i32> = (0..60).collect();
    a.write_region(&[0, 2], &[10, 6], &first).unwrap();
    patch(&mut model, 10, [0, 2], [10, 6], &first);
    let second: Vec<i32> = (100..108).collect();
    a.write_region(&[3, 3], &[2, 4], &second).unwrap();
    patch(&mut model, 10, [3, 3], [2, 4], &second);
    assert_eq!(a.read_all::<i32>().unwrap(), model);
    assert_eq!(a.read_region::<i32>(&[2, 1], &[9, 5]).unwrap(), {
        (2..11).flat_map(|r| (1..6).map(move |c| (r, c))).map(|(r, c)| model[r * 10 + c]).collect::<Vec<_>>()
    });
    // Chunk (1, 0) holds rows 1..4 and columns 0..4 at its own shape: 12 int32 once decoded.
    let stored = db.store().get("a/c/1/0").unwrap().unwrap();
    assert_eq!(zstd::decode_all(&stored[..]).unwrap().len(), 3 * 4 * 4);
    // Untouched chunks stay unstored.
    assert!(db.store().get("a/c/4/0").unwrap().is_none());

    // Shrink to 5 rows (edges are kept), then grow to 16: rows 5.. read as fill, and an edge of 2
    // is appended to cover 14..16 (the edges summed to 14).
    a.resize(&[5, 10]).unwrap();
    a.resize(&[16, 10]).unwrap();
    model[50..].fill(-1);
    model.extend([-1; 30]);
    assert_eq!(a.read_all::<i32>().unwrap(), model);
    let grid = &a.metadata().to_json()["chunk_grid"]["configuration"]["chunk_shapes"];
    assert_eq!(grid, &serde_json::json!([[1, [3, 3], 4, 2], 4]));
    assert_eq!(Array::open(db.store(), "/a").unwrap().metadata(), a.metadata());

    // Append two rows: one more edge of 2, merged with the last into zarr-python's run form.
    let rows: Vec<i32> = (500..520).collect();
    assert_eq!(a.append(0, &[2, 10], &rows).unwrap(), [18, 10]);
    model.extend(&rows);
    assert_eq!(a.read_all::<i32>().unwrap(), model);
    assert_eq!(a.metadata().grid_shape(), [7, 3]);
    let grid = &a.metadata().to_json()["chunk_grid"]["configuration"]["chunk_shapes"];
    assert_eq!(grid, &serde_json::json!([[1, [3, 3], 4, [2, 2]], 4]));
    assert!(a.check().unwrap().is_ok());

    // Elements scattered over chunks of their own shapes (rows 1, 3, 3, 3, 4, 2, 2; columns 4, the
    // last chunk past the end), positions counted in each chunk's own edges.
    let scatter = |model: &mut Vec<i32>, coords: &[u64], indices: &[u64], values: &[i32]| {
        let (origin, edges) = a.metadata().chunk(coords);
        for (&i, &v) in indices.iter().zip(values) {
            let (r, c) = (origin[0] + i / edges[1], origin[1] + i % edges[1]);
            if r < 18 && c < 10 {
                model[(r * 10 + c) as usize] = v; // whole chunks carry padding past the end
            }
        }
    };
    let le = |values: &[i32]| values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>();
    let (picked, tail) = (le(&[7, 8, 9]), le(&[11]));
    let whole: Vec<i32> = (900..908).collect();
    let whole_bytes = le(&whole);
    a.write_scattered(&[
        ChunkElements { coords: &[1, 0], indices: Some(&[0, 5, 11]), values: &picked },
        ChunkElements { coords: &[0, 2], indices: Some(&[1]), values: &tail },
        ChunkElements { coords: &[5, 1], indices: None, values: &whole_bytes },
    ])
    .unwrap();
    scatter(&mut model, &[1, 0], &[0, 5, 11], &[7, 8, 9]);
    scatter(&mut model, &[0, 2], &[1], &[11]);
    scatter(&mut model, &[5, 1], &(0..8).collect::<Vec<u64>>(), &whole);
    assert_eq!(a.read_all::<i32>().unwrap(), model);
    // A chunk left holding only the fill value is erased; positions past a chunk's own edges, or
    // in its part past the array's end, and chunks past the grid are refused before any write.
    let fill = le(&[-1; 8]);
    a.write_scattered(&[ChunkElements { coords: &[6, 2], indices: None, values: &fill }]).unwrap();
    scatter(&mut model, &[6, 2], &(0..8).collect::<Vec<u64>>(), &[-1; 8]);
    assert!(a.stored_chunks().unwrap().iter().all(|(coords, _)| coords != &[6, 2]));
    let one = le(&[5]);
    for (coords, index) in [(&[0u64, 2][..], 3u64), (&[0, 0], 4), (&[7, 0], 0), (&[2, 3], 0)] {
        let bad = a.write_scattered(&[
            ChunkElements { coords: &[1, 1], indices: Some(&[0]), values: &one },
            ChunkElements { coords, indices: Some(&[index]), values: &one },
        ]);
        assert!(matches!(bad, Err(Error::Array(ArrayError::OutOfBounds { .. }))), "{coords:?} {index}: {bad:?}");
    }
    assert_eq!(a.read_all::<i32>().unwrap(), model);

    // Not yet supported on a rectilinear grid: refused by name.
    assert!(matches!(a.encode_chunk(&[0; 16]), Err(Error::Array(ArrayError::RectilinearUnsupported { .. }))));
    assert_eq!(a.read_all::<i32>().unwrap(), model);
}

#[test]
fn hostile_rectilinear_metadata_is_refused_before_any_allocation() {
    let doc = |shapes: serde_json::Value, shape: u64| {
        let doc = serde_json::json!({
            "zarr_format": 3, "node_type": "array", "shape": [shape], "data_type": "uint8",
            "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [shapes]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}],
        });
        ArrayMetadata::from_json(doc.to_string().as_bytes())
    };
    // 2^60 chunks of one element: one run, answered without expanding it.
    let huge = doc(serde_json::json!([[1, 1u64 << 60]]), 1 << 50).unwrap();
    assert_eq!(huge.grid_shape(), [1 << 50]);
    assert_eq!(huge.chunk_of(&[(1 << 50) - 1]), [(1 << 50) - 1]);
    // Edges summing past 2^64, short of the shape, or a chunk above 2^40 elements.
    for (shapes, shape) in [
        (serde_json::json!([[1 << 20, 1u64 << 60]]), 4),
        (serde_json::json!([3, 4]), 8),
        (serde_json::json!([1u64 << 41]), 4),
    ] {
        let err = doc(shapes.clone(), shape).unwrap_err();
        assert!(err.to_string().contains("chunk_grid.configuration.chunk_shapes"), "{shapes}: {err}");
    }
}
