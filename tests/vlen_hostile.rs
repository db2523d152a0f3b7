//! Damaged variable-length chunks and invalid stored text: every read is a typed error naming the
//! chunk, never a panic, and no allocation follows a length or count the data claims.

use std::sync::Arc;

use zarrdb::error::ArrayError;
use zarrdb::{Array, ArrayMetadata, DataType, Error, MemoryStore, Store};

fn item_list(items: &[&[u8]]) -> Vec<u8> {
    let mut out = (items.len() as u32).to_le_bytes().to_vec();
    for item in items {
        out.extend_from_slice(&(item.len() as u32).to_le_bytes());
        out.extend_from_slice(item);
    }
    out
}

#[test]
fn damaged_item_lists_are_codec_errors() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    // One chunk of four items, no compression: what is stored is the item list itself.
    let text = Array::create(store.clone(), "/t", ArrayMetadata::new(DataType::String, vec![4], vec![4])).unwrap();
    let bytes = Array::create(store.clone(), "/b", ArrayMetadata::new(DataType::Bytes, vec![4], vec![4])).unwrap();
    let good = item_list(&[b"a", b"bc", b"", b"d"]);
    let mut length_past_end = good.clone();
    length_past_end[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    let mut huge_count = good.clone();
    huge_count[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty value", vec![]),
        ("cut inside the count", vec![4, 0]),
        ("fewer items than the chunk", item_list(&[b"a", b"b", b"c"])),
        ("more items than the chunk", item_list(&[b"a", b"b", b"c", b"d", b"e"])),
        ("count of 2^32-1", huge_count),
        ("item length past the end", length_past_end),
        ("cut inside an item", good[..good.len() - 1].to_vec()),
        ("bytes after the last item", [good.clone(), vec![0]].concat()),
    ];
    for (name, value) in &cases {
        for array in [&text, &bytes] {
            store.set(&array.chunk_key(&[0]), value).unwrap();
            match array.path().to_string().as_str() {
                "/t" => assert!(matches!(array.read_all_items::<String>(), Err(Error::Codec { .. })), "{name}"),
                _ => assert!(matches!(array.read_all_items::<Vec<u8>>(), Err(Error::Codec { .. })), "{name}"),
            }
            let report = array.check().unwrap();
            assert_eq!(report.corrupt.len(), 1, "check finds {name}");
        }
    }
    // Not UTF-8: refused for text, fine as bytes.
    let latin1 = item_list(&[b"a", b"\xe9t\xe9", b"", b"d"]);
    store.set(&text.chunk_key(&[0]), &latin1).unwrap();
    assert!(matches!(text.read_all_items::<String>(), Err(Error::Codec { .. })));
    store.set(&bytes.chunk_key(&[0]), &latin1).unwrap();
    assert_eq!(bytes.read_all_items::<Vec<u8>>().unwrap()[1], b"\xe9t\xe9");
}

#[test]
fn stored_utf32_that_is_no_text_is_an_item_error() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let meta = ArrayMetadata::new(DataType::FixedLengthUtf32 { length_bytes: 8 }, vec![2], vec![2]);
    let a = Array::create(store.clone(), "/u", meta).unwrap();
    // A lone surrogate and a code point past U+10FFFF.
    let chunk = [0x00d800u32, 0, 0x41, 0x110000].iter().flat_map(|u| u.to_le_bytes()).collect::<Vec<u8>>();
    a.write_region_bytes(&[0], &[2], &chunk).unwrap();
    match a.read_all_items::<String>() {
        Err(Error::Array(ArrayError::InvalidItem { index, .. })) => assert_eq!(index, 0),
        other => panic!("expected InvalidItem, got {other:?}"),
    }
    assert!(matches!(a.read_items::<String>(&[1], &[1]), Err(Error::Array(ArrayError::InvalidItem { .. }))));
}
