"""``ZarrdbStore.compact()``: the space of a deleted array goes back to the file system, what
stays reads back unchanged, and what stops a compaction is a typed ``CompactError`` that leaves
everything in place (docs/python.md, "Compaction")."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrdb
from zarrdb import ZarrdbStore


def _fill(store: ZarrdbStore) -> np.ndarray:
    """Two 16 MB arrays of random (incompressible) float32; the first is deleted."""
    rng = np.random.default_rng(3)
    data = rng.random((2048, 2048), dtype=np.float32)
    root = zarr.open_group(store, mode="w")
    for name in ("gone", "kept"):
        root.create_array(name, shape=data.shape, chunks=(512, 512), dtype="float32")[:] = data
    del root["gone"]
    return data


def test_compact_gives_back_the_space_of_a_deleted_array(tmp_path: Path) -> None:
    path = tmp_path / "c.zarrdb"
    store = ZarrdbStore(path, multi_process=False)
    data = _fill(store)
    # With a snapshot open the data is copied into a new file; the snapshot reads on.
    snap = store.snapshot()
    before, after = store.compact()
    assert after < before * 0.7, (before, after)
    assert after == os.path.getsize(path)
    np.testing.assert_array_equal(zarr.open_array(snap, path="kept", mode="r")[:], data)
    np.testing.assert_array_equal(zarr.open_array(store, path="kept", mode="r")[:], data)
    del snap
    store.close()
    reopened = ZarrdbStore(path, read_only=True)
    np.testing.assert_array_equal(zarr.open_array(reopened, path="kept", mode="r")[:], data)


@pytest.mark.parametrize(
    ("name", "options"),
    [("m.zarrdb", {}), ("l.lmdb", {"backend": "lmdb"})],
    ids=["redb-multi-process", "lmdb"],
)
def test_an_open_snapshot_makes_compact_raise(tmp_path: Path, name: str, options: dict) -> None:
    # redb with multi_process=True (the default), and LMDB, whose compacted copy replaces data.mdb.
    store = ZarrdbStore(tmp_path / name, **options)
    data = _fill(store)
    snap = store.snapshot()
    with pytest.raises(zarrdb.CompactError, match="snapshot"):
        store.compact()
    np.testing.assert_array_equal(zarr.open_array(snap, path="kept", mode="r")[:], data)
    del snap
    gc.collect()
    before, after = store.compact()
    assert after < before * 0.7, (before, after)
    np.testing.assert_array_equal(zarr.open_array(store, path="kept", mode="r")[:], data)


def test_an_lmdb_database_goes_on_in_the_compacted_file(tmp_path: Path) -> None:
    path = tmp_path / "l.lmdb"
    store = ZarrdbStore(path, backend="lmdb")
    data = _fill(store)
    store.compact()
    assert os.path.getsize(path / "data.mdb") < 1.15 * data.nbytes
    zarr.open_array(store, path="kept", mode="r+")[0, 0] = 7.0
    store.close()
    reopened = ZarrdbStore(path, backend="lmdb", read_only=True)
    assert zarr.open_array(reopened, path="kept", mode="r")[0, 0] == 7.0


def test_compact_is_refused_on_sled_and_on_read_only_stores(tmp_path: Path) -> None:
    sled = ZarrdbStore(tmp_path / "s.sled", backend="sled")
    zarr.open_group(sled, mode="w")
    with pytest.raises(zarrdb.CompactError, match="does not support compaction"):
        sled.compact()
    redb = ZarrdbStore(tmp_path / "r.zarrdb")
    zarr.open_group(redb, mode="w")
    redb.close()
    with pytest.raises(ValueError):
        ZarrdbStore(tmp_path / "r.zarrdb", read_only=True).compact()


def test_a_bucket_database_compacts_garbage_of_any_age() -> None:
    # zarrdb+memory:// is the bucket engine over an in-memory object store (the Rust tests run it
    # on SeaweedFS); older_than=0 deletes every object no commit reaches, and what the head
    # reads stays.
    store = ZarrdbStore("zarrdb+memory://python-compact-older-than")
    root = zarr.open_group(store, mode="w")
    a = root.create_array("a", shape=(16, 4096), chunks=(1, 4096), dtype="uint8")
    a[:] = 1
    a[:] = 2
    store.compact(older_than=0)
    np.testing.assert_array_equal(zarr.open_array(store, path="a", mode="r")[:], 2)
    store.compact()
    for bad in (-1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="older_than"):
            store.compact(older_than=bad)
