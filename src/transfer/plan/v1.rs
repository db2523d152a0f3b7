//! Zarr v1: the whole store is one array, `meta` and `attrs` at the root, chunk keys the
//! coordinates joined by "." (exactly the v3 `v2` chunk key encoding with separator ".").

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::convert::{array_document, f_order, object, required, shape_and_chunks, ArraySpec};
use super::tree::{assign_chunks, ArraySource};
use super::{compressor, dtype, fill, Layout, Plan, PlanError, Source, CONVERTED};
use crate::metadata::json::{invalid, wrong_type};
use crate::metadata::{ChunkKeyEncoding, Separator};

pub(super) fn plan(source: &mut Source<'_>) -> Result<Plan, PlanError> {
    let keys = source.keys;
    let mut plan = super::empty(Layout::V1);
    let (_, value) = source.json("meta")?;
    // The v1 spec requires `attrs`, but a store without it has no attributes to lose.
    let attributes = match keys.iter().any(|k| k == "attrs") {
        true => fill::attributes(source.json("attrs")?.1, "attrs")?,
        false => Map::new(),
    };
    let spec = array_spec(&value, attributes)?;
    let (meta, bytes) = array_document(spec, "meta")?;
    plan.metadata.push(("zarr.json".to_owned(), bytes));
    let mut claimed = HashSet::new();
    for key in ["meta", "attrs"].into_iter().filter(|k| keys.iter().any(|key| key == k)) {
        plan.skipped.push((key.to_owned(), CONVERTED.to_owned()));
        claimed.insert(key.to_owned());
    }
    let array = ArraySource::same_keys("meta", "", meta.chunk_key_encoding, meta.grid_shape());
    assign_chunks(keys, &claimed, &[array], &mut plan);
    Ok(plan)
}

fn array_spec(value: &Value, attributes: Map<String, Value>) -> Result<ArraySpec, PlanError> {
    let key = "meta";
    let obj = object(value, key)?;
    let format = required(obj, "zarr_format", key)?;
    match format.as_u64() {
        Some(1) => {}
        Some(other) => {
            return Err(PlanError::metadata(key, invalid("zarr_format", format!("must be 1, found {other}"))))
        }
        None => return Err(PlanError::metadata(key, wrong_type("zarr_format", "the integer 1", format))),
    }
    let (shape, chunks) =
        shape_and_chunks(required(obj, "shape", key)?, required(obj, "chunks", key)?, ("shape", "chunks"), key)?;
    let dtype = dtype::from_numpy(required(obj, "dtype", key)?, None, key)?;
    let f_order = f_order(required(obj, "order", key)?, "order", key)?;
    let compressor =
        compressor::from_v1(required(obj, "compression", key)?, obj.get("compression_opts"), dtype.clone(), key)?;
    let fill_value = fill::v2(required(obj, "fill_value", key)?, dtype.data_type.clone(), key)?;
    Ok(ArraySpec {
        shape,
        chunks,
        dtype,
        f_order,
        compressor,
        filters: Default::default(),
        fill_value,
        encoding: ChunkKeyEncoding::V2(Separator::Dot),
        attributes,
        dimension_names: None,
    })
}
