//! The array metadata document (spec "Array metadata").

use serde_json::{Map, Value};

use super::chunk_grid::ChunkGrid;
use super::chunk_key_encoding::ChunkKeyEncoding;
use super::data_type::DataType;
use super::extension::NamedConfig;
use super::fill_value::FillValue;
use super::json::{as_object, as_u64, as_u64_list, invalid, may_ignore, required, wrong_type};
use crate::error::MetadataError;

const MEMBERS: [&str; 11] = [
    "zarr_format",
    "node_type",
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_key_encoding",
    "fill_value",
    "codecs",
    "attributes",
    "storage_transformers",
    "dimension_names",
];

/// A Zarr v3 array's `zarr.json`, validated.
///
/// ```
/// let doc = br#"{"zarr_format": 3, "node_type": "array", "shape": [4, 4], "data_type": "int32",
///   "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
///   "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
///   "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}"#;
/// let meta = zarrdb::ArrayMetadata::from_json(doc).unwrap();
/// assert_eq!(meta.chunk_shape, vec![2, 2]);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ArrayMetadata {
    /// Length of each dimension.
    pub shape: Vec<u64>,
    /// Element type.
    pub data_type: DataType,
    /// Chunk shape of the regular chunk grid; for a rectilinear grid, the largest edge of each
    /// dimension (the shape the codec chain is checked against; use [`ArrayMetadata::chunk`]
    /// for one chunk's place and shape).
    pub chunk_shape: Vec<u64>,
    /// The chunk grid: regular (of `chunk_shape`) or rectilinear.
    pub chunk_grid: ChunkGrid,
    /// How chunk coordinates become keys.
    pub chunk_key_encoding: ChunkKeyEncoding,
    /// Value of unwritten elements.
    pub fill_value: FillValue,
    /// The codec chain as written; validated by the codec layer when the array is opened.
    pub codecs: Vec<NamedConfig>,
    /// User attributes.
    pub attributes: Map<String, Value>,
    /// Storage transformers; `None` when the member is absent.
    pub storage_transformers: Option<Vec<NamedConfig>>,
    /// Dimension names; `None` when the member is absent.
    pub dimension_names: Option<Vec<Option<String>>>,
    /// Members outside the spec marked `"must_understand": false`, kept and written back.
    pub extra: Map<String, Value>,
}

impl ArrayMetadata {
    /// A new array's metadata with the `bytes` codec (little endian; `vlen-utf8` or `vlen-bytes`
    /// for variable-length types), the default chunk key encoding and the data type's zero
    /// (empty text, no bytes) as fill value.
    pub fn new(data_type: DataType, shape: Vec<u64>, chunk_shape: Vec<u64>) -> ArrayMetadata {
        let mut bytes = match &data_type {
            DataType::String => NamedConfig::with_configuration("vlen-utf8", Map::new()),
            DataType::Bytes => NamedConfig::with_configuration("vlen-bytes", Map::new()),
            _ => NamedConfig::new("bytes"),
        };
        if bytes.name == "bytes" && data_type.layout() != crate::metadata::Layout::Bytes {
            let mut config = Map::new();
            config.insert("endian".into(), "little".into());
            bytes.configuration = Some(config);
        }
        ArrayMetadata {
            shape,
            fill_value: FillValue::zero(data_type.clone()),
            data_type,
            chunk_shape,
            chunk_grid: ChunkGrid::Regular,
            chunk_key_encoding: ChunkKeyEncoding::default(),
            codecs: vec![bytes],
            attributes: Map::new(),
            storage_transformers: None,
            dimension_names: None,
            extra: Map::new(),
        }
    }

    /// Parse and validate a `zarr.json` that must describe an array.
    pub fn from_json(bytes: &[u8]) -> Result<ArrayMetadata, MetadataError> {
        let value: Value = super::json::parse(bytes)?;
        let obj = as_object(&value, "(document)")?;
        super::check_header(obj, "array")?;
        ArrayMetadata::from_object(obj)
    }

    pub(crate) fn from_object(obj: &Map<String, Value>) -> Result<ArrayMetadata, MetadataError> {
        let mut extra = Map::new();
        for (name, value) in obj {
            if !MEMBERS.contains(&name.as_str()) {
                if !may_ignore(value) {
                    return Err(MetadataError::UnknownField { field: name.clone() });
                }
                extra.insert(name.clone(), value.clone());
            }
        }
        let shape = as_u64_list(required(obj, "shape", "shape")?, "shape")?;
        let data_type = DataType::from_json(required(obj, "data_type", "data_type")?)?;
        let (chunk_grid, chunk_shape) = ChunkGrid::from_json(required(obj, "chunk_grid", "chunk_grid")?, &shape)?;
        let chunk_key_encoding =
            ChunkKeyEncoding::from_json(required(obj, "chunk_key_encoding", "chunk_key_encoding")?)?;
        let fill_value = FillValue::from_json(required(obj, "fill_value", "fill_value")?, data_type.clone())?;
        let codecs = NamedConfig::list_from_json(required(obj, "codecs", "codecs")?, "codecs", true)?;
        if codecs.is_empty() {
            return Err(invalid("codecs", "the list must hold at least an array -> bytes codec"));
        }
        let attributes = match obj.get("attributes") {
            Some(value) => as_object(value, "attributes")?.clone(),
            None => Map::new(),
        };
        let storage_transformers = match obj.get("storage_transformers") {
            Some(value) => {
                let list = NamedConfig::list_from_json(value, "storage_transformers", false)?;
                if let Some(first) = list.first() {
                    // The spec makes every storage transformer a required extension.
                    return Err(MetadataError::Unsupported {
                        field: "storage_transformers".into(),
                        kind: "storage transformer",
                        name: first.name.clone(),
                    });
                }
                Some(list)
            }
            None => None,
        };
        let dimension_names = match obj.get("dimension_names") {
            Some(value) => Some(dimension_names(value, shape.len())?),
            None => None,
        };
        let meta = ArrayMetadata {
            shape,
            data_type,
            chunk_shape,
            chunk_grid,
            chunk_key_encoding,
            fill_value,
            codecs,
            attributes,
            storage_transformers,
            dimension_names,
            extra,
        };
        meta.check()?;
        Ok(meta)
    }

    /// The document as JSON, in the member order of the spec.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("zarr_format".into(), 3.into());
        obj.insert("node_type".into(), "array".into());
        obj.insert("shape".into(), self.shape.clone().into());
        obj.insert("data_type".into(), self.data_type.to_json());
        obj.insert("chunk_grid".into(), self.chunk_grid.to_json(&self.chunk_shape));
        obj.insert("chunk_key_encoding".into(), self.chunk_key_encoding.to_json());
        obj.insert("fill_value".into(), self.fill_value.to_json(self.data_type.clone()));
        obj.insert("codecs".into(), self.codecs.iter().map(NamedConfig::to_json).collect());
        obj.insert("attributes".into(), Value::Object(self.attributes.clone()));
        if let Some(list) = &self.storage_transformers {
            obj.insert("storage_transformers".into(), list.iter().map(NamedConfig::to_json).collect());
        }
        if let Some(names) = &self.dimension_names {
            obj.insert(
                "dimension_names".into(),
                names.iter().map(|n| n.clone().map_or(Value::Null, Value::String)).collect(),
            );
        }
        obj.extend(self.extra.clone());
        Value::Object(obj)
    }

    /// The document as pretty-printed UTF-8 JSON bytes, as stored under `zarr.json`.
    pub fn to_json_bytes(&self) -> Vec<u8> {
        super::pretty(&self.to_json())
    }

    /// Number of chunks along each dimension (edge chunks included).
    pub fn grid_shape(&self) -> Vec<u64> {
        match &self.chunk_grid {
            ChunkGrid::Regular => self
                .shape
                .iter()
                .zip(&self.chunk_shape)
                .map(|(&s, &c)| if s == 0 { 0 } else { s.div_ceil(c) })
                .collect(),
            ChunkGrid::Rectilinear(grid) => grid.dims().iter().zip(&self.shape).map(|(e, &n)| e.count(n)).collect(),
        }
    }

    /// Whether every chunk has `chunk_shape` (a regular grid).
    pub fn is_regular(&self) -> bool {
        matches!(self.chunk_grid, ChunkGrid::Regular)
    }

    /// The origin (array coordinates) and the shape of chunk `coords` (`coords` inside
    /// [`grid_shape`](Self::grid_shape)); the shape is the chunk's full edges, which may reach past
    /// the array's end.
    pub fn chunk(&self, coords: &[u64]) -> (Vec<u64>, Vec<u64>) {
        match &self.chunk_grid {
            ChunkGrid::Regular => (
                coords.iter().zip(&self.chunk_shape).map(|(&i, &c)| i.saturating_mul(c)).collect(),
                self.chunk_shape.clone(),
            ),
            ChunkGrid::Rectilinear(grid) => grid.dims().iter().zip(coords).map(|(e, &i)| e.chunk(i)).unzip(),
        }
    }

    /// The coordinates of the chunk holding element `index` (inside the array).
    pub fn chunk_of(&self, index: &[u64]) -> Vec<u64> {
        match &self.chunk_grid {
            ChunkGrid::Regular => index.iter().zip(&self.chunk_shape).map(|(&x, &c)| x / c).collect(),
            ChunkGrid::Rectilinear(grid) => grid.dims().iter().zip(index).map(|(e, &x)| e.index_of(x)).collect(),
        }
    }

    /// The range of chunk coordinates along each dimension that the box `offset..offset+shape`
    /// (inside the array) overlaps.
    pub fn chunks_overlapping(&self, offset: &[u64], shape: &[u64]) -> Vec<std::ops::Range<u64>> {
        if shape.contains(&0) {
            return offset.iter().map(|_| 0..0).collect();
        }
        let last: Vec<u64> = offset.iter().zip(shape).map(|(&o, &s)| o + s - 1).collect();
        let (lo, hi) = (self.chunk_of(offset), self.chunk_of(&last));
        lo.into_iter().zip(hi).map(|(a, b)| a..b + 1).collect()
    }

    /// The metadata after the shape becomes `shape` (a rectilinear grid grows as zarr-python
    /// 3.4 grows it: one edge appended to cover the new length).
    pub fn resized(&self, shape: Vec<u64>) -> ArrayMetadata {
        let chunk_grid = self.chunk_grid.resized(&shape);
        let chunk_shape = chunk_grid.bounding().unwrap_or_else(|| self.chunk_shape.clone());
        ArrayMetadata { shape, chunk_shape, chunk_grid, ..self.clone() }
    }

    /// Validate members that relate to each other; called by `from_json` and before creating.
    pub(crate) fn check(&self) -> Result<(), MetadataError> {
        check_grid(&self.shape, &self.chunk_shape, &self.chunk_grid)?;
        self.chunk_grid.check(&self.shape)?;
        if let Some(names) = &self.dimension_names {
            if names.len() != self.shape.len() {
                return Err(invalid(
                    "dimension_names",
                    format!("expected {} names (one per dimension), found {}", self.shape.len(), names.len()),
                ));
            }
        }
        if self.data_type == DataType::String && std::str::from_utf8(self.fill_value.as_le_bytes()).is_err() {
            return Err(invalid("fill_value", "the fill value of a string array must be UTF-8"));
        }
        if !self.data_type.is_variable_length() && self.fill_value.as_le_bytes().len() != self.data_type.size() {
            return Err(invalid("fill_value", format!("fill value has the wrong size for {}", self.data_type)));
        }
        Ok(())
    }
}

fn check_grid(shape: &[u64], chunk_shape: &[u64], grid: &ChunkGrid) -> Result<(), MetadataError> {
    let field = match grid {
        ChunkGrid::Regular => "chunk_grid.configuration.chunk_shape",
        _ => "chunk_grid.configuration.chunk_shapes",
    };
    if chunk_shape.len() != shape.len() {
        return Err(invalid(
            field,
            format!("expected {} chunk lengths (one per dimension of shape), found {}", shape.len(), chunk_shape.len()),
        ));
    }
    for (i, (&s, &c)) in shape.iter().zip(chunk_shape).enumerate() {
        if c == 0 && s != 0 {
            return Err(invalid(field, format!("chunk length 0 on dimension {i} of length {s}")));
        }
    }
    // A chunk must be addressable in memory: refuse grids whose chunk byte size overflows.
    let elements = chunk_shape.iter().try_fold(1u64, |acc, &c| acc.checked_mul(c.max(1)));
    if elements.is_none_or(|n| n > (1 << 40)) {
        return Err(invalid(field, "a chunk of more than 2^40 elements is not supported"));
    }
    Ok(())
}

fn dimension_names(value: &Value, rank: usize) -> Result<Vec<Option<String>>, MetadataError> {
    let field = "dimension_names";
    let items = value.as_array().ok_or_else(|| wrong_type(field, "a list of strings or nulls", value))?;
    if items.len() != rank {
        return Err(invalid(field, format!("expected {rank} names (one per dimension), found {}", items.len())));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s.clone())),
            other => Err(wrong_type(&format!("{field}[{i}]"), "a string or null", other)),
        })
        .collect()
}

/// `zarr_format` must be the integer 3.
pub(crate) fn zarr_format(obj: &Map<String, Value>) -> Result<(), MetadataError> {
    let value = required(obj, "zarr_format", "zarr_format")?;
    match as_u64(value, "zarr_format") {
        Ok(3) => Ok(()),
        Ok(other) => Err(invalid("zarr_format", format!("must be 3, found {other}"))),
        Err(_) => Err(wrong_type("zarr_format", "the integer 3", value)),
    }
}
