//! [`Merged`] against a model: random batches over a random base, every read compared with a
//! `BTreeMap` that applied the same batches.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use super::{Merged, WriteSet};
use crate::error::StoreError;
use crate::store::kv::{slice_range, KvSnapshot, WriteBatch};
use crate::store::ByteRange;

/// A snapshot over a map.
struct MapSnapshot(BTreeMap<String, Vec<u8>>);

impl KvSnapshot for MapSnapshot {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.0.get(key).cloned())
    }

    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get(key).map(|v| slice_range(key, v, range)).transpose()
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        Ok(self.0.get(key).map(|v| v.len() as u64))
    }

    fn next_key(&self, from: &str, within: &str) -> Result<Option<String>, StoreError> {
        let mut after = self.0.range::<str, _>((Bound::Included(from), Bound::Unbounded));
        Ok(after.next().map(|(k, _)| k.clone()).filter(|k| k.starts_with(within)))
    }

    fn keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        Ok(self.0.keys().filter(|k| k.starts_with(prefix)).cloned().collect())
    }
}

/// xorshift64*: reproducible without a dependency (the engine's model tests use it too).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }
}

const PARTS: [&str; 5] = ["a", "b", "ab", "c/", "zarr.json"];

fn key(rng: &mut Rng) -> String {
    let depth = 1 + rng.below(3);
    (0..depth).map(|_| PARTS[rng.below(PARTS.len())]).collect::<Vec<_>>().join("/")
}

fn prefix(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => String::new(),
        1 => format!("{}/", PARTS[rng.below(PARTS.len())]),
        _ => {
            let k = key(rng);
            let cut = rng.below(k.len() + 1);
            k[..cut].to_owned()
        }
    }
}

fn apply(model: &mut BTreeMap<String, Vec<u8>>, batch: &WriteBatch) {
    for p in &batch.erased_prefixes {
        model.retain(|k, _| !k.starts_with(p.as_str()));
    }
    for (k, v) in &batch.puts {
        match v {
            Some(v) => model.insert(k.clone(), v.clone()),
            None => model.remove(k),
        };
    }
}

#[test]
fn merged_reads_match_a_model_of_the_batches_applied_in_order() {
    for seed in 1..200u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut model = BTreeMap::new();
        for _ in 0..rng.below(12) {
            let len = rng.below(6);
            model.insert(key(&mut rng), vec![rng.below(256) as u8; len]);
        }
        let base: Arc<dyn KvSnapshot> = Arc::new(MapSnapshot(model.clone()));
        let mut writes = WriteSet::default();
        for _ in 0..1 + rng.below(5) {
            let mut batch = WriteBatch::default();
            for _ in 0..rng.below(2) {
                batch.erased_prefixes.push(prefix(&mut rng));
            }
            for _ in 0..rng.below(6) {
                let value = (rng.below(3) > 0).then(|| vec![rng.below(256) as u8; rng.below(6)]);
                batch.puts.insert(key(&mut rng), value);
            }
            writes.apply(&batch);
            apply(&mut model, &batch);
        }
        let merged = Merged { base, writes: Arc::new(writes) };
        for _ in 0..40 {
            let k = key(&mut rng);
            let want = model.get(&k);
            assert_eq!(merged.get(&k).unwrap().as_ref(), want, "seed {seed}: get {k}");
            assert_eq!(merged.size(&k).unwrap(), want.map(|v| v.len() as u64), "seed {seed}: size {k}");
            let range = ByteRange::FromStart { offset: 0, length: Some(1) };
            let sliced = want.map(|v| slice_range(&k, v, range).is_ok());
            match merged.get_range(&k, range) {
                Ok(got) => assert_eq!(got.is_some(), want.is_some(), "seed {seed}: get_range {k}"),
                Err(_) => assert_eq!(sliced, Some(false), "seed {seed}: get_range {k}"),
            }
            let mut seen = None;
            let found = merged.with_value(&k, &mut |v| seen = Some(v.to_vec())).unwrap();
            assert_eq!((found, seen.as_ref()), (want.is_some(), want), "seed {seed}: with_value {k}");
            let p = prefix(&mut rng);
            let listed: Vec<String> = model.keys().filter(|m| m.starts_with(p.as_str())).cloned().collect();
            assert_eq!(merged.keys(&p).unwrap(), listed, "seed {seed}: keys {p:?}");
            let from = format!("{p}{}", &k[..rng.below(k.len() + 1)]);
            let next = model
                .range::<str, _>((Bound::Included(from.as_str()), Bound::Unbounded))
                .map(|(m, _)| m.clone())
                .find(|m| m.starts_with(p.as_str()));
            assert_eq!(merged.next_key(&from, &p).unwrap(), next, "seed {seed}: next_key {from:?} in {p:?}");
        }
    }
}
