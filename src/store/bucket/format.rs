//! The bytes of a bucket database's objects (docs/format.md, "Bucket databases"): the head, commit
//! records and manifest pages. Fixed-width little-endian integers, no varints, every count and
//! length checked against the bytes left before it is used, and a CRC-32C of everything before it
//! at the end of each object, so a damaged or hostile object is a typed error, never a panic or an
//! allocation sized by what it claims.

use std::sync::Arc;

/// 128 random bits naming an object that is written once and never changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Id(pub [u8; 16]);

impl Id {
    /// A new id. std's hasher is keyed randomly per process; the time, the process and a counter
    /// make two ids of one process differ.
    pub fn fresh() -> Id {
        use std::hash::{BuildHasher, Hasher};
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let count = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut bytes = [0u8; 16];
        for (half, salt) in [(0usize, 0x5a5a_u64), (8, 0xa5a5)] {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u128(nanos);
            hasher.write_u64(count);
            hasher.write_u32(std::process::id());
            hasher.write_u64(salt);
            bytes[half..half + 8].copy_from_slice(&hasher.finish().to_le_bytes());
        }
        Id(bytes)
    }

    /// Lowercase hex, as in object names.
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The format number written in the marker object; bumped by every layout change.
pub(crate) const FORMAT: u32 = 1;

const MARKER_MAGIC: &[u8; 8] = b"ZDBBUCKT";
const HEAD_MAGIC: &[u8; 8] = b"ZDBHEAD1";
const COMMIT_MAGIC: &[u8; 8] = b"ZDBCOMT1";
const PAGE_MAGIC: &[u8; 8] = b"ZDBPAGE1";
const FENCE_MAGIC: &[u8; 8] = b"ZDBFENC1";

/// What is wrong with an object's bytes.
pub(crate) type Damage = &'static str;

/// The marker object: magic, format number, the database's id.
pub(crate) fn marker(database: Id) -> Vec<u8> {
    let mut out = Vec::with_capacity(32);
    out.extend_from_slice(MARKER_MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&database.0);
    seal(out)
}

/// The format number of a marker object.
pub(crate) fn parse_marker(bytes: &[u8]) -> Result<u32, Damage> {
    let mut r = Reader::sealed(bytes, MARKER_MAGIC)?;
    let format = r.u32()?;
    r.id()?;
    r.end()?;
    Ok(format)
}

/// The head: the latest commit's id and sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub commit: Id,
    pub sequence: u64,
}

impl Head {
    pub fn to_bytes(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(40);
        out.extend_from_slice(HEAD_MAGIC);
        out.extend_from_slice(&self.commit.0);
        out.extend_from_slice(&self.sequence.to_le_bytes());
        seal(out)
    }

    pub fn parse(bytes: &[u8]) -> Result<Head, Damage> {
        let mut r = Reader::sealed(bytes, HEAD_MAGIC)?;
        let head = Head { commit: r.id()?, sequence: r.u64()? };
        r.end()?;
        Ok(head)
    }
}

/// The `fence` object: the number of the newest commit a collection moved the head to before
/// deleting anything. A commit based on an older head may have uploaded objects that collection
/// deleted, so it uploads its values again instead of naming them (`reuse.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fence {
    pub sequence: u64,
}

impl Fence {
    pub fn to_bytes(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24);
        out.extend_from_slice(FENCE_MAGIC);
        out.extend_from_slice(&self.sequence.to_le_bytes());
        seal(out)
    }

    pub fn parse(bytes: &[u8]) -> Result<Fence, Damage> {
        let mut r = Reader::sealed(bytes, FENCE_MAGIC)?;
        let fence = Fence { sequence: r.u64()? };
        r.end()?;
        Ok(fence)
    }
}

/// One manifest page as a commit record names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PageRef {
    /// The page's first key; the page holds the keys from it up to the next page's first key.
    pub first: String,
    pub id: Id,
    pub entries: u32,
    /// The page object's length, checked when it is read.
    pub len: u32,
}

/// A commit record: its parent, number, time and the manifest's pages in key order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Commit {
    pub parent: Option<Id>,
    pub sequence: u64,
    /// Microseconds since the Unix epoch, by the writer's clock (for people, not for GC).
    pub time_us: u64,
    pub pages: Vec<PageRef>,
}

impl Commit {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(COMMIT_MAGIC);
        out.push(u8::from(self.parent.is_some()));
        out.extend_from_slice(&self.parent.unwrap_or(Id([0; 16])).0);
        out.extend_from_slice(&self.sequence.to_le_bytes());
        out.extend_from_slice(&self.time_us.to_le_bytes());
        out.extend_from_slice(&(self.pages.len() as u32).to_le_bytes());
        for page in &self.pages {
            put_str(&mut out, &page.first);
            out.extend_from_slice(&page.id.0);
            out.extend_from_slice(&page.entries.to_le_bytes());
            out.extend_from_slice(&page.len.to_le_bytes());
        }
        seal(out)
    }

    pub fn parse(bytes: &[u8]) -> Result<Commit, Damage> {
        let mut r = Reader::sealed(bytes, COMMIT_MAGIC)?;
        let has_parent = match r.u8()? {
            0 => false,
            1 => true,
            _ => return Err("a parent flag that is neither 0 nor 1"),
        };
        let parent = r.id()?;
        let sequence = r.u64()?;
        let time_us = r.u64()?;
        let count = r.count(16 + 4 + 4 + 4)?;
        let mut pages = Vec::with_capacity(count);
        for _ in 0..count {
            let first = r.string()?;
            let page = PageRef { first, id: r.id()?, entries: r.u32()?, len: r.u32()? };
            if let Some(last) = pages.last() {
                let last: &PageRef = last;
                if last.first >= page.first {
                    return Err("pages out of key order");
                }
            }
            pages.push(page);
        }
        r.end()?;
        Ok(Commit { parent: has_parent.then_some(parent), sequence, time_us, pages })
    }
}

/// Where a value's bytes are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    /// In the page itself (small values: documents, small chunks).
    Inline(Arc<[u8]>),
    /// `len` bytes at `offset` in pack `pack`, whose CRC-32C is `crc`.
    Packed { pack: Id, offset: u64, len: u64, crc: u32 },
}

impl Value {
    pub fn len(&self) -> u64 {
        match self {
            Value::Inline(bytes) => bytes.len() as u64,
            Value::Packed { len, .. } => *len,
        }
    }
}

/// A manifest page: keys in bytewise order and where each value is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Page {
    pub entries: Vec<(String, Value)>,
}

impl Page {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut packs: Vec<Id> = Vec::new();
        for (_, value) in &self.entries {
            if let Value::Packed { pack, .. } = value {
                if !packs.contains(pack) {
                    packs.push(*pack);
                }
            }
        }
        let mut out = Vec::new();
        out.extend_from_slice(PAGE_MAGIC);
        out.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        out.extend_from_slice(&(packs.len() as u32).to_le_bytes());
        for pack in &packs {
            out.extend_from_slice(&pack.0);
        }
        for (key, value) in &self.entries {
            put_str(&mut out, key);
            match value {
                Value::Inline(bytes) => {
                    out.push(0);
                    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                    out.extend_from_slice(bytes);
                }
                Value::Packed { pack, offset, len, crc } => {
                    out.push(1);
                    let index = packs.iter().position(|p| p == pack).expect("every pack was listed above");
                    out.extend_from_slice(&(index as u32).to_le_bytes());
                    out.extend_from_slice(&offset.to_le_bytes());
                    out.extend_from_slice(&len.to_le_bytes());
                    out.extend_from_slice(&crc.to_le_bytes());
                }
            }
        }
        seal(out)
    }

    pub fn parse(bytes: &[u8]) -> Result<Page, Damage> {
        let mut r = Reader::sealed(bytes, PAGE_MAGIC)?;
        let entries = r.u32()? as usize;
        let packs = r.count(16)?;
        let packs: Vec<Id> = (0..packs).map(|_| r.id()).collect::<Result<_, _>>()?;
        // Each entry takes at least 4 + 1 + 4 bytes.
        if entries > r.left() / 9 {
            return Err("more entries than the page has bytes for");
        }
        let mut out: Vec<(String, Value)> = Vec::with_capacity(entries);
        for _ in 0..entries {
            let key = r.string()?;
            let value = match r.u8()? {
                0 => {
                    let len = r.u32()? as usize;
                    Value::Inline(r.take(len)?.into())
                }
                1 => {
                    let index = r.u32()? as usize;
                    let pack = *packs.get(index).ok_or("a pack index past the page's packs")?;
                    let (offset, len, crc) = (r.u64()?, r.u64()?, r.u32()?);
                    offset.checked_add(len).ok_or("a value past the largest offset")?;
                    Value::Packed { pack, offset, len, crc }
                }
                _ => return Err("an entry of unknown kind"),
            };
            if out.last().is_some_and(|(last, _)| *last >= key) {
                return Err("entries out of key order");
            }
            out.push((key, value));
        }
        r.end()?;
        Ok(Page { entries: out })
    }

    /// The page's length in bytes once written, near enough to split pages by.
    pub fn entry_size(key: &str, value: &Value) -> usize {
        4 + key.len()
            + 1
            + match value {
                Value::Inline(bytes) => 4 + bytes.len(),
                Value::Packed { .. } => 4 + 8 + 8 + 4 + 16,
            }
    }
}

fn put_str(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

fn seal(mut out: Vec<u8>) -> Vec<u8> {
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Reads an object's fields in order, never past its end.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// The object's fields after `magic`, once its checksum holds.
    fn sealed(bytes: &'a [u8], magic: &[u8; 8]) -> Result<Reader<'a>, Damage> {
        let body_len = bytes.len().checked_sub(4).ok_or("shorter than its checksum")?;
        let (body, crc) = bytes.split_at(body_len);
        if crc32c::crc32c(body).to_le_bytes() != crc {
            return Err("its checksum does not match");
        }
        let rest = body.strip_prefix(magic.as_slice()).ok_or("not the expected kind of object")?;
        Ok(Reader { bytes: rest })
    }

    fn left(&self) -> usize {
        self.bytes.len()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Damage> {
        if n > self.bytes.len() {
            return Err("a length past the end of the object");
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, Damage> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, Damage> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("four bytes")))
    }

    fn u64(&mut self) -> Result<u64, Damage> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("eight bytes")))
    }

    fn id(&mut self) -> Result<Id, Damage> {
        Ok(Id(self.take(16)?.try_into().expect("sixteen bytes")))
    }

    /// A count of items at least `each` bytes long, checked against the bytes left.
    fn count(&mut self, each: usize) -> Result<usize, Damage> {
        let n = self.u32()? as usize;
        if n > self.left() / each {
            return Err("a count larger than the object can hold");
        }
        Ok(n)
    }

    fn string(&mut self) -> Result<String, Damage> {
        let len = self.u32()? as usize;
        String::from_utf8(self.take(len)?.to_vec()).map_err(|_| "a key that is not UTF-8")
    }

    fn end(&self) -> Result<(), Damage> {
        match self.bytes.is_empty() {
            true => Ok(()),
            false => Err("bytes after the last field"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> Page {
        let pack = Id([7; 16]);
        Page {
            entries: vec![
                ("a/zarr.json".into(), Value::Inline(Arc::from(&b"{}"[..]))),
                ("a/c/0".into(), Value::Packed { pack, offset: 10, len: 20, crc: 3 }),
            ]
            .into_iter()
            .rev()
            .collect(),
        }
    }

    #[test]
    fn objects_read_back() {
        let head = Head { commit: Id::fresh(), sequence: 9 };
        assert_eq!(Head::parse(&head.to_bytes()), Ok(head));
        let commit = Commit {
            parent: Some(Id::fresh()),
            sequence: 3,
            time_us: 44,
            pages: vec![PageRef { first: "a".into(), id: Id::fresh(), entries: 2, len: 100 }],
        };
        assert_eq!(Commit::parse(&commit.to_bytes()), Ok(commit));
        assert_eq!(Page::parse(&page().to_bytes()), Ok(page()));
        assert_eq!(parse_marker(&marker(Id::fresh())), Ok(FORMAT));
        let fence = Fence { sequence: 12 };
        assert_eq!(Fence::parse(&fence.to_bytes()), Ok(fence));
        let bytes = fence.to_bytes();
        for cut in 0..bytes.len() {
            assert!(Fence::parse(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        assert!(Fence::parse(&head.to_bytes()).is_err());
        assert_ne!(Id::fresh(), Id::fresh());
    }

    #[test]
    fn every_damage_is_refused_without_a_panic() {
        let bytes = page().to_bytes();
        for cut in 0..bytes.len() {
            assert!(Page::parse(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        for at in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 0x40;
            assert!(Page::parse(&bad).is_err(), "flip at {at}");
        }
        // A page whose checksum holds but whose counts lie.
        let mut lying = bytes[..bytes.len() - 4].to_vec();
        lying[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Page::parse(&seal(lying)).is_err());
        assert_eq!(Head::parse(&page().to_bytes()), Err("not the expected kind of object"));
    }
}
