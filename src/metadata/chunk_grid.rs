//! The chunk grid of an array: `regular` (one chunk shape) or `rectilinear` (per-dimension chunk
//! edges, as zarr-python 3.4 writes with `array.rectilinear_chunks` enabled).
//!
//! A rectilinear dimension is kept as the runs it was written with (run-length pairs are never
//! expanded), so a run count of 2^60 costs one entry, and every query is a binary search over the
//! runs. The document is written back exactly as it was read.

use serde_json::Value;

use super::json::{as_object, as_str, as_u64, configuration, invalid, only_members, required, wrong_type};
use crate::error::MetadataError;

const FIELD: &str = "chunk_grid.configuration.chunk_shapes";

/// How an array's chunk grid is declared. The regular grid's chunk shape is
/// [`ArrayMetadata::chunk_shape`](crate::ArrayMetadata::chunk_shape).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ChunkGrid {
    /// `{"name": "regular", ...}`: every chunk has `chunk_shape`.
    #[default]
    Regular,
    /// `{"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [...]}}`.
    Rectilinear(RectilinearGrid),
}

/// The edges of a rectilinear grid, one [`Edges`] per dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RectilinearGrid {
    dims: Vec<Edges>,
}

/// The chunk edges of one dimension of a rectilinear grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edges {
    /// A bare integer: chunks of this length repeat to cover any extent.
    Uniform(u64),
    /// A list of edge lengths and `[length, count]` runs, as written.
    Explicit(Vec<Run>),
}

/// One entry of an explicit edge list, with its place in the dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// Edge length of every chunk of the run.
    pub size: u64,
    /// Chunks in the run.
    pub count: u64,
    /// Written as a `[size, count]` pair (else a bare integer, count 1).
    pair: bool,
    /// Index of the run's first chunk.
    first: u64,
    /// Array coordinate where the run's first chunk starts.
    origin: u64,
}

impl Edges {
    /// Chunks overlapping `0..extent`.
    pub fn count(&self, extent: u64) -> u64 {
        match self {
            Edges::Uniform(c) => extent.div_ceil(*c),
            Edges::Explicit(_) if extent == 0 => 0,
            Edges::Explicit(_) => self.index_of(extent - 1) + 1,
        }
    }

    /// Index of the chunk holding coordinate `x` (`x` below the sum of the edges).
    pub fn index_of(&self, x: u64) -> u64 {
        match self {
            Edges::Uniform(c) => x / c,
            Edges::Explicit(runs) => {
                let run = &runs[runs.partition_point(|r| r.origin <= x) - 1];
                run.first + ((x - run.origin) / run.size).min(run.count - 1)
            }
        }
    }

    /// Start coordinate and edge length of chunk `i` (`i` below the number of edges).
    pub fn chunk(&self, i: u64) -> (u64, u64) {
        match self {
            Edges::Uniform(c) => (i.saturating_mul(*c), *c),
            Edges::Explicit(runs) => {
                let run = &runs[runs.partition_point(|r| r.first <= i) - 1];
                (run.origin + (i - run.first) * run.size, run.size)
            }
        }
    }

    /// The largest edge.
    fn max_edge(&self) -> u64 {
        match self {
            Edges::Uniform(c) => *c,
            Edges::Explicit(runs) => runs.iter().map(|r| r.size).max().unwrap_or(0),
        }
    }

    /// Sum of the edges (`None` for a bare integer, which covers any extent).
    fn total(&self) -> Option<u64> {
        match self {
            Edges::Uniform(_) => None,
            Edges::Explicit(runs) => runs.last().map(|r| r.origin + r.size * r.count),
        }
    }

    fn parse(value: &Value, field: &str) -> Result<Edges, MetadataError> {
        let positive = |v: &Value, f: &str| match as_u64(v, f)? {
            0 => Err(invalid(f, "must be at least 1")),
            n => Ok(n),
        };
        let items = match value {
            Value::Number(_) => return Ok(Edges::Uniform(positive(value, field)?)),
            Value::Array(items) if !items.is_empty() => items,
            Value::Array(_) => return Err(invalid(field, "a dimension needs at least one edge")),
            other => return Err(wrong_type(field, "an integer or a list of edges", other)),
        };
        let mut runs = Vec::with_capacity(items.len());
        let (mut first, mut origin) = (0u64, 0u64);
        for (i, item) in items.iter().enumerate() {
            let f = format!("{field}[{i}]");
            let (size, count, pair) = match item {
                Value::Array(p) if p.len() == 2 => {
                    (positive(&p[0], &format!("{f}[0]"))?, positive(&p[1], &format!("{f}[1]"))?, true)
                }
                Value::Array(_) => return Err(invalid(&f, "a run must be [edge length, count]")),
                _ => (positive(item, &f)?, 1, false),
            };
            let length = size.checked_mul(count);
            let (Some(next_first), Some(next_origin)) =
                (first.checked_add(count), length.and_then(|l| origin.checked_add(l)))
            else {
                return Err(invalid(&f, "the edges of the dimension sum past 2^64"));
            };
            runs.push(Run { size, count, pair, first, origin });
            (first, origin) = (next_first, next_origin);
        }
        Ok(Edges::Explicit(runs))
    }

    fn to_json(&self) -> Value {
        match self {
            Edges::Uniform(c) => (*c).into(),
            Edges::Explicit(runs) => {
                runs.iter().map(|r| if r.pair { serde_json::json!([r.size, r.count]) } else { r.size.into() }).collect()
            }
        }
    }

    /// These edges grown to cover `extent` as zarr-python 3.4 does on resize: a bare integer
    /// covers any extent; an explicit list short of `extent` gets one edge for the rest, and is
    /// then written in zarr's run-length form (equal neighbours merged into `[size, count]`).
    fn grown(&self, extent: u64) -> Edges {
        let Edges::Explicit(runs) = self else { return self.clone() };
        let total = self.total().unwrap_or(0);
        if extent <= total {
            return self.clone();
        }
        let mut merged: Vec<Run> = Vec::with_capacity(runs.len() + 1);
        let extra = Run { size: extent - total, count: 1, pair: false, first: 0, origin: 0 };
        for run in runs.iter().chain(std::iter::once(&extra)) {
            match merged.last_mut() {
                Some(last) if last.size == run.size => last.count += run.count,
                _ => merged.push(Run { size: run.size, count: run.count, pair: false, first: 0, origin: 0 }),
            }
        }
        let (mut first, mut origin) = (0, 0);
        for run in &mut merged {
            run.pair = run.count > 1;
            (run.first, run.origin) = (first, origin);
            first += run.count;
            origin += run.size * run.count;
        }
        Edges::Explicit(merged)
    }
}

impl RectilinearGrid {
    /// The edges of each dimension.
    pub fn dims(&self) -> &[Edges] {
        &self.dims
    }
}

impl ChunkGrid {
    /// Parse `chunk_grid` for an array of `shape`. Returns the grid and the chunk shape the
    /// codec chain is checked against: the regular chunk shape, or the largest edge of each
    /// rectilinear dimension.
    pub(crate) fn from_json(value: &Value, shape: &[u64]) -> Result<(ChunkGrid, Vec<u64>), MetadataError> {
        let obj = as_object(value, "chunk_grid")?;
        only_members(obj, &["name", "configuration"], "chunk_grid")?;
        let name = as_str(required(obj, "name", "chunk_grid.name")?, "chunk_grid.name")?;
        let config = configuration(obj, "chunk_grid")?
            .ok_or_else(|| MetadataError::MissingField { field: "chunk_grid.configuration".into() })?;
        match name {
            "regular" => {
                only_members(config, &["chunk_shape"], "chunk_grid.configuration")?;
                let field = "chunk_grid.configuration.chunk_shape";
                let chunk_shape = super::json::as_u64_list(required(config, "chunk_shape", field)?, field)?;
                Ok((ChunkGrid::Regular, chunk_shape))
            }
            "rectilinear" => {
                only_members(config, &["kind", "chunk_shapes"], "chunk_grid.configuration")?;
                let kind_field = "chunk_grid.configuration.kind";
                let kind = as_str(required(config, "kind", kind_field)?, kind_field)?;
                if kind != "inline" {
                    return Err(MetadataError::Unsupported {
                        field: kind_field.into(),
                        kind: "rectilinear chunk grid kind",
                        name: kind.into(),
                    });
                }
                let value = required(config, "chunk_shapes", FIELD)?;
                let list = value.as_array().ok_or_else(|| wrong_type(FIELD, "a list", value))?;
                if list.len() != shape.len() {
                    return Err(invalid(
                        FIELD,
                        format!(
                            "expected {} dimensions (one per dimension of shape), found {}",
                            shape.len(),
                            list.len()
                        ),
                    ));
                }
                let dims = list
                    .iter()
                    .enumerate()
                    .map(|(d, v)| Edges::parse(v, &format!("{FIELD}[{d}]")))
                    .collect::<Result<Vec<_>, _>>()?;
                let grid = ChunkGrid::Rectilinear(RectilinearGrid { dims });
                let bounding = grid.bounding().unwrap_or_default();
                Ok((grid, bounding))
            }
            other => Err(MetadataError::Unsupported {
                field: "chunk_grid.name".into(),
                kind: "chunk grid",
                name: other.into(),
            }),
        }
    }

    /// The largest edge of each dimension of a rectilinear grid (`None` for a regular grid).
    pub(crate) fn bounding(&self) -> Option<Vec<u64>> {
        match self {
            ChunkGrid::Regular => None,
            ChunkGrid::Rectilinear(grid) => Some(grid.dims.iter().map(Edges::max_edge).collect()),
        }
    }

    /// The `chunk_grid` member; `chunk_shape` is the regular grid's.
    pub(crate) fn to_json(&self, chunk_shape: &[u64]) -> Value {
        match self {
            ChunkGrid::Regular => {
                serde_json::json!({"name": "regular", "configuration": {"chunk_shape": chunk_shape}})
            }
            ChunkGrid::Rectilinear(grid) => serde_json::json!({"name": "rectilinear", "configuration": {
                "kind": "inline",
                "chunk_shapes": grid.dims.iter().map(Edges::to_json).collect::<Vec<_>>(),
            }}),
        }
    }

    /// Check the grid against the array's shape: explicit edges must cover each dimension.
    pub(crate) fn check(&self, shape: &[u64]) -> Result<(), MetadataError> {
        let ChunkGrid::Rectilinear(grid) = self else { return Ok(()) };
        if grid.dims.len() != shape.len() {
            return Err(invalid(FIELD, format!("expected {} dimensions, found {}", shape.len(), grid.dims.len())));
        }
        for (d, (edges, &extent)) in grid.dims.iter().zip(shape).enumerate() {
            if let Some(total) = edges.total().filter(|&t| t < extent) {
                return Err(invalid(
                    &format!("{FIELD}[{d}]"),
                    format!("the edges sum to {total}, short of the dimension's length {extent}"),
                ));
            }
        }
        Ok(())
    }

    /// The grid after the array's shape becomes `shape` (zarr-python 3.4's rule; see
    /// [`Edges`]): a regular grid is unchanged.
    pub(crate) fn resized(&self, shape: &[u64]) -> ChunkGrid {
        match self {
            ChunkGrid::Regular => ChunkGrid::Regular,
            ChunkGrid::Rectilinear(grid) => ChunkGrid::Rectilinear(RectilinearGrid {
                dims: grid.dims.iter().zip(shape).map(|(e, &n)| e.grown(n)).collect(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn grid(chunk_shapes: Value, shape: &[u64]) -> Result<(ChunkGrid, Vec<u64>), MetadataError> {
        let value = json!({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes}});
        let parsed = ChunkGrid::from_json(&value, shape)?;
        parsed.0.check(shape)?;
        Ok(parsed)
    }

    fn dim(value: Value) -> Edges {
        Edges::parse(&value, "d").unwrap()
    }

    #[test]
    fn explicit_edges_answer_every_query() {
        let e = dim(json!([2, [3, 2], 5]));
        // Chunks start at 0, 2, 5, 8 with lengths 2, 3, 3, 5 (sum 13).
        assert_eq!((0..4).map(|i| e.chunk(i)).collect::<Vec<_>>(), [(0, 2), (2, 3), (5, 3), (8, 5)]);
        let index: Vec<u64> = (0..13).map(|x| e.index_of(x)).collect();
        assert_eq!(index, [0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3]);
        assert_eq!([0, 1, 2, 3, 8, 9, 13].map(|n| e.count(n)), [0, 1, 1, 2, 3, 4, 4]);
        assert_eq!(e.total(), Some(13));
        assert_eq!(e.max_edge(), 5);
    }

    #[test]
    fn a_bare_integer_repeats() {
        let e = dim(json!(4));
        assert_eq!((e.count(9), e.index_of(8), e.chunk(2)), (3, 2, (8, 4)));
        assert_eq!(e.total(), None);
    }

    #[test]
    fn the_document_is_written_back_as_read() {
        let shapes = json!([[1, 1, [2, 3], 4], 6, [[5, 1]]]);
        let (g, bounding) = grid(shapes.clone(), &[11, 100, 5]).unwrap();
        assert_eq!(bounding, [4, 6, 5]);
        assert_eq!(g.to_json(&[])["configuration"]["chunk_shapes"], shapes);
    }

    #[test]
    fn growing_appends_one_edge_in_zarrs_run_length_form() {
        let (g, _) = grid(json!([[2, 2, 3], 4]), &[7, 9]).unwrap();
        let grown = g.resized(&[10, 20]);
        assert_eq!(grown.to_json(&[])["configuration"]["chunk_shapes"], json!([[[2, 2], [3, 2]], 4]));
        // Shrinking keeps the edges (the spec allows edges past the extent).
        assert_eq!(g.resized(&[3, 2]), g);
    }

    #[test]
    fn a_huge_run_costs_one_entry_and_sums_are_checked() {
        let (g, _) = grid(json!([[[1, 1u64 << 60]]]), &[1 << 40]).unwrap();
        let ChunkGrid::Rectilinear(r) = &g else { panic!() };
        assert_eq!(r.dims()[0].count(1 << 40), 1 << 40);
        assert_eq!(r.dims()[0].chunk((1 << 40) - 1), ((1 << 40) - 1, 1));
        let err = grid(json!([[[1024, 1u64 << 60]]]), &[4]).unwrap_err().to_string();
        assert!(err.contains("chunk_shapes[0][0]") && err.contains("2^64"), "{err}");
        let err = grid(json!([[u64::MAX, 1]]), &[4]).unwrap_err().to_string();
        assert!(err.contains("chunk_shapes[0][1]"), "{err}");
    }

    #[test]
    fn hostile_documents_are_refused_naming_the_field() {
        let cases = [
            (json!([[2, 2]]), vec![5], "chunk_shapes[0]"), // edges short of the extent
            (json!([[0]]), vec![0], "chunk_shapes[0][0]"),
            (json!([[[2, 0]]]), vec![0], "chunk_shapes[0][0][1]"),
            (json!([[[2, 3, 4]]]), vec![0], "chunk_shapes[0][0]"),
            (json!([[]]), vec![0], "chunk_shapes[0]"),
            (json!([0]), vec![0], "chunk_shapes[0]"),
            (json!(["2"]), vec![0], "chunk_shapes[0]"),
            (json!([[-1]]), vec![0], "chunk_shapes[0][0]"),
            (json!([[2]]), vec![2, 2], "chunk_shapes"),
        ];
        for (shapes, shape, field) in cases {
            let err = grid(shapes.clone(), &shape).unwrap_err().to_string();
            assert!(err.contains(field), "{shapes}: {err}");
        }
        let kind = json!({"name": "rectilinear", "configuration": {"kind": "file", "chunk_shapes": [[1]]}});
        assert!(matches!(ChunkGrid::from_json(&kind, &[1]), Err(MetadataError::Unsupported { .. })));
        let missing = json!({"name": "rectilinear", "configuration": {"chunk_shapes": [[1]]}});
        assert!(matches!(ChunkGrid::from_json(&missing, &[1]), Err(MetadataError::MissingField { .. })));
    }
}
