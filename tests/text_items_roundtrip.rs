//! Text and byte-string arrays through the Rust API: every data type, partial writes across
//! chunks, fill values, resize and append, on a memory store and in a database file.

use std::sync::Arc;

use zarrdb::{Array, ArrayMetadata, DataType, Database, Error, FillValue, MemoryStore, Store};

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| if i % 3 == 0 { String::new() } else { format!("n{i}-\u{e9}\u{1f600}") }).collect()
}

fn check_strings(store: Arc<dyn Store>, data_type: DataType) {
    let a = Array::create(store, "/s", ArrayMetadata::new(data_type, vec![5, 7], vec![2, 3])).unwrap();
    assert_eq!(a.read_all_items::<String>().unwrap(), vec![String::new(); 35], "unwritten reads as the fill value");
    let values = names(12);
    a.write_items(&[1, 2], &[3, 4], &values).unwrap();
    assert_eq!(a.read_items::<String>(&[1, 2], &[3, 4]).unwrap(), values);
    // A write that covers parts of several chunks keeps what each chunk held around it.
    a.write_items(&[2, 3], &[1, 2], &["x".to_string(), "y".to_string()]).unwrap();
    let all = a.read_all_items::<String>().unwrap();
    assert_eq!(all[2 * 7 + 3], "x");
    assert_eq!(all[2 * 7 + 4], "y");
    assert_eq!(all[7 + 2], values[0]);
    assert_eq!(all[3 * 7 + 5], values[2 * 4 + 3]);
    // Overwriting every stored element with the fill value erases the chunks.
    a.write_items(&[0, 0], &[5, 7], &vec![String::new(); 35]).unwrap();
    assert!(a.stored_chunks().unwrap().is_empty());
}

#[test]
fn strings_variable_and_fixed_length() {
    check_strings(Arc::new(MemoryStore::new()), DataType::String);
    check_strings(Arc::new(MemoryStore::new()), DataType::FixedLengthUtf32 { length_bytes: 4 * 12 });
}

#[test]
fn byte_strings_variable_and_null_terminated() {
    for data_type in [DataType::Bytes, DataType::NullTerminatedBytes { length_bytes: 5 }] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let a = Array::create(store, "/b", ArrayMetadata::new(data_type.clone(), vec![4], vec![3])).unwrap();
        let values = vec![b"ab".to_vec(), vec![], vec![0, 0xff, 7], b"hello".to_vec()];
        a.write_items(&[0], &[4], &values).unwrap();
        assert_eq!(a.read_all_items::<Vec<u8>>().unwrap(), values, "{data_type}");
    }
}

#[test]
fn wrong_kinds_and_sizes_are_typed_errors() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let fixed = Array::create(
        store.clone(),
        "/u",
        ArrayMetadata::new(DataType::FixedLengthUtf32 { length_bytes: 8 }, vec![2], vec![2]),
    )
    .unwrap();
    let err = fixed.write_items(&[0], &[1], &["abc".to_string()]).unwrap_err();
    assert!(err.to_string().contains("needs 12 bytes"), "{err}");
    let vlen = Array::create(store, "/v", ArrayMetadata::new(DataType::String, vec![2], vec![2])).unwrap();
    assert!(matches!(vlen.read_items::<Vec<u8>>(&[0], &[2]), Err(Error::Array(_))));
    assert!(matches!(vlen.read_region_bytes(&[0], &[2]), Err(Error::Array(_))));
    assert!(matches!(vlen.write_items(&[0], &[2], &["one".to_string()]), Err(Error::Array(_))));
    assert!(matches!(vlen.write_items(&[1], &[2], &["a".to_string(), "b".to_string()]), Err(Error::Array(_))));
}

#[test]
fn resize_and_append_in_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("t.zarrdb")).unwrap();
    let mut meta = ArrayMetadata::new(DataType::String, vec![5], vec![4]);
    meta.fill_value = FillValue::from_json(&serde_json::json!("?"), DataType::String).unwrap();
    let mut a = Array::create(db.store(), "/s", meta).unwrap();
    let five: Vec<String> = (0..5).map(|i| format!("v{i}")).collect();
    a.write_items(&[0], &[5], &five).unwrap();
    a.resize(&[2]).unwrap();
    a.resize(&[6]).unwrap();
    assert_eq!(a.read_all_items::<String>().unwrap(), ["v0", "v1", "?", "?", "?", "?"], "cut part is fill");
    assert_eq!(a.append_items(0, &[2], &["p".to_string(), "q".to_string()]).unwrap(), vec![8]);
    drop(a);
    let a = Array::open(db.store(), "/s").unwrap();
    assert_eq!(a.read_all_items::<String>().unwrap(), ["v0", "v1", "?", "?", "?", "?", "p", "q"]);
}
