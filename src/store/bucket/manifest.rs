//! A commit's new manifest from its parent's: pages that no change reaches keep their id (copy on
//! write), each run of pages that changes is merged with the changes and cut into new pages.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::format::{Id, Page, PageRef, Value};
use crate::error::StoreError;

/// A page is cut once its bytes reach this (a one-key commit rewrites at most about this much).
pub(crate) const PAGE_BYTES: usize = 64 << 10;

/// The changes of one commit: first every erased prefix, then every put (`None`: removed).
pub(crate) struct Changes<'a> {
    pub erased: &'a [String],
    pub puts: &'a BTreeMap<String, Option<Value>>,
}

/// The index of the page whose range holds `key` (the first page also holds keys before its
/// first key).
pub(crate) fn page_of(pages: &[PageRef], key: &str) -> usize {
    pages.partition_point(|p| p.first.as_str() <= key).saturating_sub(1)
}

/// Whether some key starting with `prefix` lies in `lo..hi` (`lo` `None`: unbounded below).
fn prefix_meets(prefix: &str, lo: Option<&str>, hi: Option<&str>) -> bool {
    let below_hi = hi.is_none_or(|hi| prefix < hi);
    let above_lo = lo.is_none_or(|lo| lo <= prefix || lo.starts_with(prefix));
    below_hi && above_lo
}

/// The indices of the pages the changes reach, in order.
pub(crate) fn touched(pages: &[PageRef], changes: &Changes) -> Vec<usize> {
    let mut touched = vec![false; pages.len()];
    if pages.is_empty() {
        return Vec::new();
    }
    for key in changes.puts.keys() {
        touched[page_of(pages, key)] = true;
    }
    for prefix in changes.erased {
        for (i, hit) in touched.iter_mut().enumerate() {
            let lo = (i > 0).then(|| pages[i].first.as_str());
            let hi = pages.get(i + 1).map(|p| p.first.as_str());
            *hit |= prefix_meets(prefix, lo, hi);
        }
    }
    (0..pages.len()).filter(|&i| touched[i]).collect()
}

/// A page to write: its id and bytes.
pub(crate) type NewPage = (Id, Vec<u8>);

/// The new manifest, and the new pages to write.
pub(crate) fn apply(
    pages: &[PageRef],
    changes: &Changes,
    load: &mut dyn FnMut(&PageRef) -> Result<Arc<Page>, StoreError>,
) -> Result<(Vec<PageRef>, Vec<NewPage>), StoreError> {
    let touched = touched(pages, changes);
    let mut out: Vec<PageRef> = Vec::with_capacity(pages.len() + 1);
    let mut written: Vec<NewPage> = Vec::new();
    let mut run: Vec<(String, Value)> = Vec::new();
    let mut in_run = pages.is_empty();
    let mut next_touched = touched.iter().peekable();
    for (i, page) in pages.iter().enumerate() {
        if next_touched.peek() != Some(&&i) {
            if in_run {
                cut(std::mem::take(&mut run), &mut out, &mut written);
                in_run = false;
            }
            out.push(page.clone());
            continue;
        }
        next_touched.next();
        in_run = true;
        let lo = (i > 0).then_some(page.first.as_str());
        let hi = pages.get(i + 1).map(|p| p.first.as_str());
        let within = |key: &str| lo.is_none_or(|lo| lo <= key) && hi.is_none_or(|hi| key < hi);
        let loaded = load(page)?;
        let mut merged: BTreeMap<String, Value> = loaded
            .entries
            .iter()
            .filter(|(key, _)| !changes.erased.iter().any(|p| key.starts_with(p.as_str())))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        let lower = lo.map_or(std::ops::Bound::Unbounded, |lo| std::ops::Bound::Included(lo.to_owned()));
        for (key, value) in changes.puts.range((lower, std::ops::Bound::Unbounded)) {
            if !within(key) {
                break;
            }
            match value {
                Some(value) => merged.insert(key.clone(), value.clone()),
                None => merged.remove(key),
            };
        }
        run.extend(merged);
    }
    if pages.is_empty() {
        run.extend(changes.puts.iter().filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v))));
    }
    cut(run, &mut out, &mut written);
    Ok((out, written))
}

/// Cut `entries` into pages of about [`PAGE_BYTES`].
fn cut(entries: Vec<(String, Value)>, out: &mut Vec<PageRef>, written: &mut Vec<NewPage>) {
    let mut page = Page::default();
    let mut bytes = 0;
    let mut flush = |page: &mut Page, bytes: &mut usize| {
        if page.entries.is_empty() {
            return;
        }
        let page = std::mem::take(page);
        let encoded = page.to_bytes();
        let id = Id::fresh();
        out.push(PageRef {
            first: page.entries[0].0.clone(),
            id,
            entries: page.entries.len() as u32,
            len: encoded.len() as u32,
        });
        written.push((id, encoded));
        *bytes = 0;
    };
    for (key, value) in entries {
        let size = Page::entry_size(&key, &value);
        if bytes + size > PAGE_BYTES {
            flush(&mut page, &mut bytes);
        }
        bytes += size;
        page.entries.push((key, value));
    }
    flush(&mut page, &mut bytes);
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use super::*;

    fn inline(n: usize) -> Value {
        Value::Inline(vec![n as u8; n % 3000].into())
    }

    /// Random changes applied to a manifest and to a map agree, and untouched pages keep their ids.
    #[test]
    fn manifest_follows_a_model() {
        let mut model: BTreeMap<String, Value> = BTreeMap::new();
        let mut pages: Vec<PageRef> = Vec::new();
        let mut store: HashMap<Id, Arc<Page>> = HashMap::new();
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..60 {
            let mut puts = BTreeMap::new();
            let mut erased = Vec::new();
            for _ in 0..(next() % 200) {
                let key = format!("a{}/c/{}", next() % 4, next() % 500);
                let value = if next() % 5 == 0 { None } else { Some(inline(next() as usize % 5000)) };
                puts.insert(key, value);
            }
            if round % 7 == 3 {
                erased.push(format!("a{}/", next() % 4));
            }
            let changes = Changes { erased: &erased, puts: &puts };
            let before = pages.clone();
            let (new, written) = apply(&pages, &changes, &mut |p| Ok(store[&p.id].clone())).unwrap();
            for (id, bytes) in written {
                store.insert(id, Arc::new(Page::parse(&bytes).unwrap()));
            }
            model.retain(|k, _| !erased.iter().any(|p| k.starts_with(p.as_str())));
            for (k, v) in &puts {
                match v {
                    Some(v) => model.insert(k.clone(), v.clone()),
                    None => model.remove(k),
                };
            }
            let all: Vec<(String, Value)> = new.iter().flat_map(|p| store[&p.id].entries.clone()).collect();
            assert_eq!(all, model.clone().into_iter().collect::<Vec<_>>(), "round {round}");
            for p in &new {
                assert!(!store[&p.id].entries.is_empty());
                assert_eq!(store[&p.id].entries[0].0, p.first);
            }
            let kept = new.iter().filter(|p| before.iter().any(|b| b.id == p.id)).count();
            let untouched = before.len() - touched(&before, &changes).len();
            assert_eq!(kept, untouched, "round {round}: pages no change reached keep their id");
            pages = new;
        }
        assert!(pages.len() > 3, "the test reaches several pages: {}", pages.len());
    }
}
