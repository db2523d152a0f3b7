"""Node documents written through the default store are checked as the engine checks them, and
consolidated metadata is served fresh instead of stored (docs/python.md "Metadata documents")."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr
from zarr.core.buffer import Buffer, cpu, default_buffer_prototype

import zarrdb
from zarrdb import _native, ZarrdbStore

_GROUP = {"zarr_format": 3, "node_type": "group", "attributes": {}}


def _buf(document: object) -> Buffer:
    data = document if isinstance(document, bytes) else json.dumps(document).encode()
    return cpu.Buffer.from_bytes(data)


def _stored(store: ZarrdbStore, key: str) -> bytes | None:
    """The bytes the database holds, read past the store's presentation."""
    value = _native.Database.open(store.path, True).store().with_checks(False).get(key)
    return None if value is None else bytes(value)


async def _read_json(store: ZarrdbStore, key: str) -> dict:
    value = await store.get(key, default_buffer_prototype())
    assert value is not None, key
    return json.loads(value.to_bytes())


@pytest.mark.parametrize(
    ("document", "error"),
    [
        (b"bar", zarrdb.MetadataError),  # not JSON
        ({"zarr_format": 2, "node_type": "group"}, zarrdb.MetadataError),
        ({"zarr_format": 3, "node_type": "folder"}, zarrdb.MetadataError),
        ({"zarr_format": 3, "node_type": "group", "surprise": {}}, zarrdb.MetadataError),
        (
            {
                "zarr_format": 3,
                "node_type": "array",
                "shape": [4],
                "data_type": "int32",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
                "chunk_key_encoding": {"name": "default"},
                "fill_value": 0,
                "codecs": [{"name": "bytes"}, {"name": "no-such-codec"}],
            },
            zarrdb.CodecError,
        ),
    ],
)
async def test_invalid_documents_are_refused(tmp_path: Path, document: object, error: type) -> None:
    store = await ZarrdbStore.open(tmp_path / "d.zarrdb")
    with pytest.raises(error):
        await store.set("a/zarr.json", _buf(document))
    assert _stored(store, "a/zarr.json") is None
    # A transaction refuses it the same way, and an exception leaves nothing.
    with pytest.raises(error), store.transaction() as tx:
        await tx.set("a/zarr.json", _buf(document))
    assert await store.is_empty("")


async def test_no_node_inside_an_array(tmp_path: Path) -> None:
    store = await ZarrdbStore.open(tmp_path / "n.zarrdb")
    zarr.create_array(store, name="a", shape=(4,), dtype="int8")
    with pytest.raises(zarrdb.NodeError, match="is an array"):
        await store.set("a/b/zarr.json", _buf(_GROUP))
    with pytest.raises(zarrdb.NodeError, match="is an array"):
        await store._set_many([("g/zarr.json", _buf(_GROUP)), ("a/x/y/zarr.json", _buf(_GROUP))])
    assert _stored(store, "g/zarr.json") is None  # the batch is all or nothing
    # Chunk keys and anything else are not documents: stored as given.
    await store.set("a/c/0", cpu.Buffer.from_bytes(b"\x01\x02\x03\x04"))


async def test_zarr_python_documents_are_accepted(tmp_path: Path) -> None:
    store = await ZarrdbStore.open(tmp_path / "ok.zarrdb")
    root = zarr.open_group(store, mode="w", attributes={"title": "t"})
    root.create_array("f", shape=(10, 10), chunks=(5, 5), dtype="float64", fill_value=np.nan)
    root.create_array("s", shape=(3,), dtype=str)
    root.create_array("t", shape=(2,), dtype="datetime64[ns]")
    root.create_group("g").create_array("b", shape=(4,), dtype="bool", compressors=None)
    reopened = zarr.open_group(store, mode="r")
    assert sorted(reopened.keys()) == ["f", "g", "s", "t"]
    assert reopened.attrs["title"] == "t"


async def test_consolidated_metadata_is_fresh_not_stored(tmp_path: Path) -> None:
    store = await ZarrdbStore.open(tmp_path / "c.zarrdb")
    root = zarr.open_group(store, mode="w")
    root.create_array("a", shape=(4,), chunks=(2,), dtype="int32")
    root.create_group("g").create_array("b", shape=(2,), dtype="int8")
    zarr.consolidate_metadata(store)

    stored = json.loads(_stored(store, "zarr.json") or b"")
    assert stored["consolidated_metadata"]["metadata"] == {}  # a request, no copy
    served = (await _read_json(store, "zarr.json"))["consolidated_metadata"]["metadata"]
    assert sorted(served) == ["a", "g", "g/b"]

    # A resize after consolidation: a stored copy would still say 4.
    zarr.open_array(store, path="a", mode="r+").resize((10,))
    root.create_array("late", shape=(1,), dtype="uint8")
    consolidated = zarr.open_consolidated(store, mode="r")
    assert consolidated["a"].shape == (10,)
    assert "late" in consolidated
    # The served document's size is that of what get returns.
    whole = await store.get("zarr.json", default_buffer_prototype())
    assert whole is not None and await store.getsize("zarr.json") == len(whole.to_bytes())


async def test_unconsolidated_group_has_no_consolidated_metadata(tmp_path: Path) -> None:
    store = await ZarrdbStore.open(tmp_path / "u.zarrdb")
    zarr.open_group(store, mode="w").create_array("a", shape=(1,), dtype="int8")
    assert (await _read_json(store, "zarr.json")).get("consolidated_metadata") is None
    with pytest.raises(ValueError):
        zarr.open_consolidated(store, mode="r")


def _append_without_reconsolidating(store: object) -> xr.Dataset:
    """Write a consolidated dataset, then append to its arrays with zarr-python alone (as a
    pipeline that does not call consolidate_metadata would); return the whole dataset."""
    ds = xr.Dataset({"v": ("t", np.arange(6.0))}, coords={"t": np.arange(6)})
    ds.to_zarr(store, mode="w", consolidated=True)
    group = zarr.open_group(store, mode="r+", use_consolidated=False)
    group["v"].append(np.arange(6.0, 9.0))
    group["t"].append(np.arange(6, 9))
    more = xr.Dataset({"v": ("t", np.arange(6.0, 9.0))}, coords={"t": np.arange(6, 9)})
    return xr.concat([ds, more], dim="t")


async def test_xarray_sees_appends_made_after_consolidation(tmp_path: Path) -> None:
    path = tmp_path / "x.zarrdb"
    expected = _append_without_reconsolidating(ZarrdbStore(path))
    with warnings.catch_warnings():
        # xarray warns when it has to fall back from consolidated metadata.
        warnings.simplefilter("error", RuntimeWarning)
        opened = xr.open_zarr(ZarrdbStore(path, read_only=True), consolidated=True)
        xr.testing.assert_identical(opened.load(), expected)
    # What a store keeping the copy does: the same steps on a folder leave it stale.
    folder = tmp_path / "x.zarr"
    _append_without_reconsolidating(zarr.storage.LocalStore(folder))
    stale = xr.open_zarr(zarr.storage.LocalStore(folder, read_only=True), consolidated=True)
    assert stale.sizes["t"] == 6


async def test_unchecked_store_keeps_bytes(tmp_path: Path) -> None:
    store = await ZarrdbStore.open(tmp_path / "raw.zarrdb", validate_metadata=False)
    await store.set("zarr.json", _buf(b"anything"))
    assert _stored(store, "zarr.json") == b"anything"
    assert store.with_read_only(True)._validate_metadata is False
