//! Reads of one commit: a key's page (cached by id, so never stale), then its value, inline in
//! the page or one ranged read of its pack.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;

use super::format::{Commit, Id, Page, PageRef, Value};
use super::manifest::page_of;
use super::objects::Objects;
use crate::error::StoreError;
use crate::store::kv::{slice_range, KvSnapshot};
use crate::store::ByteRange;

/// Values by key up to a byte budget; the oldest go first. Holds what never changes under its
/// key (parsed pages by id, windows of packs), so nothing in it goes stale.
pub(crate) struct Cache<K, V> {
    inner: Mutex<CacheInner<K, V>>,
    budget: usize,
}

struct CacheInner<K, V> {
    values: HashMap<K, Arc<V>>,
    order: VecDeque<(K, usize)>,
    bytes: usize,
}

impl<K: std::hash::Hash + Eq + Copy, V> Cache<K, V> {
    pub fn new(budget: usize) -> Cache<K, V> {
        Cache { inner: Mutex::new(CacheInner { values: HashMap::new(), order: VecDeque::new(), bytes: 0 }), budget }
    }

    fn get(&self, key: &K) -> Option<Arc<V>> {
        self.inner.lock().values.get(key).cloned()
    }

    pub fn contains(&self, key: &K) -> bool {
        self.inner.lock().values.contains_key(key)
    }

    pub fn insert(&self, key: K, value: Arc<V>, bytes: usize) {
        let mut inner = self.inner.lock();
        if inner.values.insert(key, value).is_some() {
            return;
        }
        inner.order.push_back((key, bytes));
        inner.bytes += bytes;
        while inner.bytes > self.budget && inner.order.len() > 1 {
            let Some((old, size)) = inner.order.pop_front() else { break };
            inner.values.remove(&old);
            inner.bytes -= size;
        }
    }
}

/// Parsed manifest pages by id.
pub(crate) type PageCache = Cache<Id, Page>;

/// Windows of packs, by pack and window number: values written together (the chunks of one
/// commit) are read together, one request per window instead of one per value.
pub(crate) type WindowCache = Cache<(Id, u64), Vec<u8>>;

/// The size of a pack window; values up to a quarter of it are read through windows.
pub(crate) const WINDOW: u64 = 1 << 20;

/// The page `page` names, from the cache or the bucket.
pub(crate) fn load_page(objects: &Objects, cache: &PageCache, page: &PageRef) -> Result<Arc<Page>, StoreError> {
    if let Some(found) = cache.get(&page.id) {
        return Ok(found);
    }
    let bytes = objects.block(objects.get(&page_name(page)))?;
    accept_page(objects, cache, page, bytes)
}

/// The object name of a page.
pub(crate) fn page_name(page: &PageRef) -> String {
    format!("pages/{}", page.id.hex())
}

/// The page `page` names from its object's bytes (`None`: missing), checked against the record's
/// account of it, and cached.
pub(crate) fn accept_page(
    objects: &Objects,
    cache: &PageCache,
    page: &PageRef,
    bytes: Option<Vec<u8>>,
) -> Result<Arc<Page>, StoreError> {
    let damaged = |what: &'static str| StoreError::Damaged {
        backend: objects.backend(),
        operation: "read page",
        key: format!("{}/{}", objects.locator(), page_name(page)),
        what,
    };
    let bytes = bytes.ok_or_else(|| damaged("a page the commit names is missing"))?;
    if bytes.len() != page.len as usize {
        return Err(damaged("a page of another length than its commit says"));
    }
    let parsed = Page::parse(&bytes).map_err(damaged)?;
    if parsed.entries.len() != page.entries as usize
        || parsed.entries.first().map(|e| e.0.as_str()) != Some(&page.first)
    {
        return Err(damaged("a page whose entries differ from its commit's account"));
    }
    let parsed = Arc::new(parsed);
    cache.insert(page.id, parsed.clone(), bytes.len());
    Ok(parsed)
}

/// One commit, read.
pub(crate) struct BucketSnapshot {
    pub objects: Arc<Objects>,
    pub cache: Arc<PageCache>,
    pub windows: Arc<WindowCache>,
    pub commit: Arc<Commit>,
}

impl BucketSnapshot {
    fn page(&self, index: usize) -> Result<Arc<Page>, StoreError> {
        load_page(&self.objects, &self.cache, &self.commit.pages[index])
    }

    /// Where `key`'s value is.
    pub fn entry(&self, key: &str) -> Result<Option<Value>, StoreError> {
        if self.commit.pages.is_empty() {
            return Ok(None);
        }
        let page = self.page(page_of(&self.commit.pages, key))?;
        Ok(page.entries.binary_search_by(|(k, _)| k.as_str().cmp(key)).ok().map(|at| page.entries[at].1.clone()))
    }

    fn read(&self, key: &str, value: &Value, range: Option<(u64, u64)>) -> Result<Vec<u8>, StoreError> {
        match value {
            Value::Inline(bytes) => Ok(match range {
                None => bytes.to_vec(),
                Some((start, len)) => bytes[start as usize..(start + len) as usize].to_vec(),
            }),
            Value::Packed { pack, offset, len, crc } => {
                let name = format!("packs/{}", pack.hex());
                let damaged = |what: &'static str| StoreError::Damaged {
                    backend: self.objects.backend(),
                    operation: "get",
                    key: key.to_owned(),
                    what,
                };
                let (at, n) = range.unwrap_or((0, *len));
                let start = offset + at;
                let window = start / WINDOW;
                let bytes = if n <= WINDOW / 4 && (start + n).div_ceil(WINDOW) == window + 1 {
                    let cached = self.windows.get(&(*pack, window));
                    let part = match cached {
                        Some(part) => part,
                        None => {
                            let part =
                                self.objects.block(self.objects.get_range_upto(&name, window * WINDOW, WINDOW))?;
                            let part = Arc::new(part.ok_or_else(|| damaged("a pack the manifest names is missing"))?);
                            self.windows.insert((*pack, window), part.clone(), part.len());
                            part
                        }
                    };
                    let from = (start - window * WINDOW) as usize;
                    part.get(from..from + n as usize)
                        .ok_or_else(|| damaged("a pack shorter than its manifest says"))?
                        .to_vec()
                } else {
                    let bytes = self.objects.block(self.objects.get_range(&name, start, n))?;
                    bytes.ok_or_else(|| damaged("a pack the manifest names is missing"))?
                };
                if range.is_none() && crc32c::crc32c(&bytes) != *crc {
                    return Err(damaged("a value whose checksum does not match"));
                }
                Ok(bytes)
            }
        }
    }
}

impl KvSnapshot for BucketSnapshot {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(value) = self.entry(key)? else { return Ok(None) };
        self.read(key, &value, None).map(Some)
    }

    fn get_range(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(value) = self.entry(key)? else { return Ok(None) };
        let len = value.len();
        let Some(r) = range.resolve(len) else {
            // The error every engine gives for a range outside the value.
            return slice_range(key, &[], range).map(Some);
        };
        self.read(key, &value, Some((r.start as u64, (r.end - r.start) as u64))).map(Some)
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        Ok(self.entry(key)?.map(|v| v.len()))
    }

    /// Where the value is: a pack's bytes are never rewritten, so the same place is the same value.
    fn value_token(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.entry(key)?.map(|value| match value {
            Value::Inline(bytes) => [&[0u8][..], &bytes].concat(),
            Value::Packed { pack, offset, len, crc } => {
                [&[1u8][..], &pack.0, &offset.to_le_bytes(), &len.to_le_bytes(), &crc.to_le_bytes()].concat()
            }
        }))
    }

    fn next_key(&self, from: &str, within: &str) -> Result<Option<String>, StoreError> {
        let pages = &self.commit.pages;
        if pages.is_empty() {
            return Ok(None);
        }
        for index in page_of(pages, from)..pages.len() {
            let page = self.page(index)?;
            let at = page.entries.partition_point(|(k, _)| k.as_str() < from);
            if let Some((key, _)) = page.entries.get(at) {
                return Ok(key.starts_with(within).then(|| key.clone()));
            }
        }
        Ok(None)
    }

    fn keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let pages = &self.commit.pages;
        let mut out = Vec::new();
        if pages.is_empty() {
            return Ok(out);
        }
        for index in page_of(pages, prefix)..pages.len() {
            if index > page_of(pages, prefix) && !pages[index].first.starts_with(prefix) {
                break;
            }
            let page = self.page(index)?;
            let at = page.entries.partition_point(|(k, _)| k.as_str() < prefix);
            let mut ended = false;
            for (key, _) in &page.entries[at..] {
                if !key.starts_with(prefix) {
                    ended = true;
                    break;
                }
                out.push(key.clone());
            }
            if ended {
                break;
            }
        }
        Ok(out)
    }
}
