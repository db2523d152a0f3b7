//! Packs kept across the tries of one commit. A commit that lost the race for `head` is tried
//! again over the new head with the same values (`db/race.rs` rechecks its reads and commits the
//! same batch; history rebuilds its records around the same values), so the packs its first try
//! uploaded already hold them: the next try names them instead of uploading them again, as
//! docs/architecture.md's commit protocol says. A value is taken from a kept pack only when its
//! bytes there are the same, compared whole (a CRC alone could match other bytes).

use std::collections::HashMap;
use std::thread::ThreadId;
use std::time::Instant;

use bytes::Bytes;

use super::format::{Id, Value};

/// The packs one commit uploaded, with where each of its values is.
pub(super) struct Kept {
    /// The thread whose commit uploaded them: only its next try takes them.
    pub thread: ThreadId,
    /// When the first of them was handed to the uploads.
    pub first_upload: Instant,
    /// The number of the oldest head a try that uploaded them was based on: a collection that
    /// fenced the head past it may have deleted them (`BucketEngine::fenced_since`).
    pub based_on: u64,
    packs: Vec<(Id, Bytes)>,
    /// (length, CRC-32C) -> (index in `packs`, offset).
    values: HashMap<(u64, u32), Vec<(usize, u64)>>,
}

impl Kept {
    pub fn new(thread: ThreadId, first_upload: Instant) -> Kept {
        Kept { thread, first_upload, based_on: u64::MAX, packs: Vec::new(), values: HashMap::new() }
    }

    /// Note a pack uploaded, and the values in it: (offset, length, CRC-32C).
    pub fn add_pack(&mut self, id: Id, bytes: Bytes, values: impl IntoIterator<Item = (u64, u64, u32)>) {
        let index = self.packs.len();
        for (offset, len, crc) in values {
            self.values.entry((len, crc)).or_default().push((index, offset));
        }
        self.packs.push((id, bytes));
    }

    /// Where a kept pack holds exactly `value` (whose CRC-32C is `crc`).
    pub fn find(&self, value: &[u8], crc: u32) -> Option<Value> {
        let len = value.len() as u64;
        self.values.get(&(len, crc))?.iter().find_map(|&(index, offset)| {
            let (id, bytes) = &self.packs[index];
            let start = usize::try_from(offset).ok()?;
            let held = bytes.get(start..start.checked_add(value.len())?)?;
            (held == value).then_some(Value::Packed { pack: *id, offset, len, crc })
        })
    }

    /// `other`'s packs and values added to these (the packs of two tries, for a third).
    pub fn absorb(&mut self, other: Kept) {
        self.first_upload = self.first_upload.min(other.first_upload);
        self.based_on = self.based_on.min(other.based_on);
        let shift = self.packs.len();
        for (key, places) in other.values {
            let ours = self.values.entry(key).or_default();
            ours.extend(places.into_iter().map(|(index, offset)| (index + shift, offset)));
        }
        self.packs.extend(other.packs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_bytes_are_found() {
        let id = Id::fresh();
        let pack = Bytes::from_static(b"aaaabbbbcccc");
        let mut kept = Kept::new(std::thread::current().id(), Instant::now());
        let crc = |v: &[u8]| crc32c::crc32c(v);
        kept.add_pack(id, pack, [(0, 4, crc(b"aaaa")), (4, 4, crc(b"bbbb")), (8, 4, 7)]);
        assert!(matches!(kept.find(b"bbbb", crc(b"bbbb")), Some(Value::Packed { offset: 4, len: 4, .. })));
        // A CRC that matches (as noted) over other bytes: not taken.
        assert!(kept.find(b"dddd", 7).is_none());
        assert!(kept.find(b"bbb", crc(b"bbb")).is_none());
        // A lying offset past the pack's end: not taken, no panic.
        let mut lying = Kept::new(std::thread::current().id(), Instant::now());
        lying.add_pack(Id::fresh(), Bytes::from_static(b"ab"), [(u64::MAX - 1, 4, crc(b"aaaa"))]);
        assert!(lying.find(b"aaaa", crc(b"aaaa")).is_none());
        kept.absorb(lying);
        assert!(kept.find(b"aaaa", crc(b"aaaa")).is_some());
    }
}
