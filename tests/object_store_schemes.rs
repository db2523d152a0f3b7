//! `gs://` and `az://` locators open the same object store as `s3://`, through the same crate
//! (no Google or Azure server runs here, so only what needs none is checked): each is
//! recognised by the library and the command line, configured from its environment variables,
//! and a missing configuration is a clean `StoreError::Open` naming the scheme, before any
//! request. Other schemes are refused.

use std::process::Command;

use zarrdb::error::StoreError;
use zarrdb::store::ObjectStore;
use zarrdb::Store;

#[test]
fn gs_and_az_locators_open_the_object_store() {
    // No AZURE_* variables here: Azure needs an account name, and says so.
    let az = ObjectStore::open("az://container/prefix").unwrap_err();
    assert!(matches!(az, StoreError::Open { .. }) && az.to_string().contains("configuring az"), "{az}");
    // Google's client may be built without credentials (they are fetched at the first request).
    match ObjectStore::open("gs://bucket/prefix") {
        Ok(store) => assert_eq!(store.kind(), "gs"),
        Err(e) => assert!(matches!(e, StoreError::Open { .. }) && e.to_string().contains("gs"), "{e}"),
    }
    for other in ["ftp://host/x", "s3:/bucket", "gs://", "az:///prefix"] {
        assert!(matches!(ObjectStore::open(other), Err(StoreError::Open { .. })), "{other}");
    }

    let out = Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(["tree", "az://container/prefix"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("configuring az") && !stderr.contains("unknown locator scheme"), "{stderr}");
}
