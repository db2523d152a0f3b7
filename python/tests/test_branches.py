"""Writing to a branch from Python: ``ZarrdbStore(path, branch=NAME)`` reads the branch's head
and commits every write, transaction and restore to it, while ``main`` (what other Zarr tools
read) stays as it was until a merge. Stores of one database on different branches share one
handle per process; sets queued on both in one event loop land each on its own branch."""

from __future__ import annotations

import asyncio
import pickle
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr
from zarr.core.buffer import default_buffer_prototype

import zarrdb
from zarrdb import ZarrdbStore


def _main_with_array(path: Path) -> ZarrdbStore:
    store = ZarrdbStore(path, history=True)
    a = zarr.create_array(store, name="a", shape=(8,), chunks=(2,), dtype="int32", fill_value=0)
    a[:] = np.arange(8)
    return store


def test_zarr_writes_to_a_branch_and_merges(tmp_path: Path) -> None:
    path = tmp_path / "b.zarrdb"
    main = _main_with_array(path)
    base = main.create_branch("dev")

    dev = ZarrdbStore(path, branch="dev")
    zarr.open_array(dev, path="a")[2:4] = [20, 30]
    with dev.transaction(message="on dev", author="tester") as tx:
        zarr.open_array(tx, path="a")[6] = 60
    zarr.create_array(dev, name="b", shape=(2,), chunks=(2,), dtype="float32", fill_value=1.5)

    # main is untouched; the branch reads its own head, and so does version="dev".
    assert zarr.open_array(main, path="a", mode="r")[:].tolist() == list(range(8))
    assert "b" not in zarr.open_group(main, mode="r")
    expected = [0, 1, 20, 30, 4, 5, 60, 7]
    assert zarr.open_array(dev, path="a", mode="r")[:].tolist() == expected
    assert zarr.open_array(ZarrdbStore(path, version="dev"), path="a", mode="r")[:].tolist() == expected

    # The branch's log, its head and its diff against where it started.
    log = dev.log()
    assert log[1].message == "on dev" and log[1].author == "tester"
    assert [c.id for c in log].index(base) == 3
    assert dev.branches()["dev"] == log[0].id
    changed = {key for key, _, _ in dev.diff(base)}
    assert {"a/c/1", "a/c/3", "b/zarr.json"} <= changed
    assert dev.tag("dev-done") == log[0].id

    # main moves on elsewhere; merging brings the branch's chunks in beside it.
    zarr.open_array(main, path="a")[0] = 100
    kind, head = main.merge("dev", message="merge dev")
    assert kind == "merged" and main.log()[0].id == head
    merged = zarr.open_array(main, path="a", mode="r")[:].tolist()
    assert merged == [100, 1, 20, 30, 4, 5, 60, 7]
    assert zarr.open_array(main, path="b", mode="r")[:].tolist() == [1.5, 1.5]


def test_restore_on_a_branch(tmp_path: Path) -> None:
    path = tmp_path / "r.zarrdb"
    main = _main_with_array(path)
    main.create_branch("fix")
    fix = ZarrdbStore(path, branch="fix")
    good = fix.tag("good")
    zarr.open_array(fix, path="a")[:] = -1
    head = fix.restore("good", "/a")
    assert fix.branches()["fix"] == head
    assert zarr.open_array(fix, path="a", mode="r")[:].tolist() == list(range(8))
    assert fix.log()[1].id != good  # the bad write stays in the branch's history
    assert main.branches()["main"] == main.log()[0].id


def test_sets_on_two_branches_in_one_loop(tmp_path: Path) -> None:
    """The event loop queues sets of both stores at once; each lands on its own branch."""
    path = tmp_path / "q.zarrdb"
    main = _main_with_array(path)
    main.create_branch("dev")
    dev = ZarrdbStore(path, branch="dev")
    proto = default_buffer_prototype()

    async def write() -> None:
        await asyncio.gather(
            *(main.set(f"x/m{i}", proto.buffer.from_bytes(b"main-%d" % i)) for i in range(50)),
            *(dev.set(f"x/d{i}", proto.buffer.from_bytes(b"dev-%d" % i)) for i in range(50)),
        )

    asyncio.run(write())

    async def keys(store: ZarrdbStore) -> set[str]:
        return {k async for k in store.list_prefix("x/")}

    assert asyncio.run(keys(main)) == {f"x/m{i}" for i in range(50)}
    assert asyncio.run(keys(dev)) == {f"x/d{i}" for i in range(50)}
    got = asyncio.run(dev.get("x/d7", proto))
    assert got is not None and got.to_bytes() == b"dev-7"


def test_identity_pickling_and_refusals(tmp_path: Path) -> None:
    path = tmp_path / "i.zarrdb"
    main = _main_with_array(path)
    main.create_branch("dev")
    dev = ZarrdbStore(path, branch="dev")
    assert dev != main and dev == ZarrdbStore(path, branch="dev")
    assert hash(dev) == hash(ZarrdbStore(path, branch="dev"))
    assert ZarrdbStore(path, branch="main") == ZarrdbStore(path)
    assert repr(dev).endswith(", branch='dev')")
    assert repr(dev.with_read_only(True)).endswith(", branch='dev', read_only=True)")
    again = pickle.loads(pickle.dumps(dev))
    assert again == dev
    zarr.open_array(again, path="a")[0] = 7
    assert zarr.open_array(dev, path="a", mode="r")[0] == 7
    assert zarr.open_array(main, path="a", mode="r")[0] == 0

    with pytest.raises(ValueError):
        ZarrdbStore(path, branch="dev", version="main")
    with pytest.raises(ValueError):
        ZarrdbStore(path, branch="")
    with pytest.raises(zarrdb.HistoryError) as missing:
        zarr.open_array(ZarrdbStore(path, branch="nope"), path="a", mode="r")
    assert missing.value.kind == "not_found"


def test_read_only_branch_store_follows_the_head_across_an_upgrade(tmp_path: Path) -> None:
    """A read-only branch store opened first (the handle read-only) keeps reading the branch
    after a writable store of the process replaced the handle."""
    path = tmp_path / "u.zarrdb"
    main = _main_with_array(path)
    main.create_branch("dev")
    main.close()
    del main
    reader = ZarrdbStore(path, branch="dev", read_only=True)
    assert zarr.open_array(reader, path="a", mode="r")[:].tolist() == list(range(8))
    writer = ZarrdbStore(path, branch="dev")
    zarr.open_array(writer, path="a")[:2] = [9, 9]
    assert zarr.open_array(reader, path="a", mode="r")[:2].tolist() == [9, 9]
    with pytest.raises(ValueError):
        zarr.open_array(reader, path="a")[0] = 1


def test_xarray_on_a_branch(tmp_path: Path) -> None:
    path = tmp_path / "x.zarrdb"
    store = ZarrdbStore(path, history=True)
    ds = xr.Dataset({"t": (("time",), np.arange(4.0))}, coords={"time": np.arange(4)})
    ds.to_zarr(store, consolidated=False, zarr_format=3)
    store.create_branch("append")
    branch = ZarrdbStore(path, branch="append")
    more = xr.Dataset({"t": (("time",), np.arange(4.0, 6.0))}, coords={"time": np.arange(4, 6)})
    more.to_zarr(branch, append_dim="time", consolidated=False, zarr_format=3)
    assert xr.open_zarr(branch, consolidated=False)["t"].values.tolist() == [0, 1, 2, 3, 4, 5]
    assert xr.open_zarr(store, consolidated=False)["t"].values.tolist() == [0, 1, 2, 3]
    assert store.merge("append")[0] == "fast_forward"
    assert xr.open_zarr(store, consolidated=False)["t"].values.tolist() == [0, 1, 2, 3, 4, 5]
