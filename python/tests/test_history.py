"""History from Python: a store created with ``history=True`` keeps every commit as a version.
Old versions open by tag, commit id or time (``version=``, ``as_of=``) as read-only stores that
zarr-python and xarray read while writers go on, also from another process; ``log()``, tags and
``restore()``, ``expire()`` and ``collect()`` work as the Rust API does, and errors carry
``zarrdb.HistoryError`` kinds."""

from __future__ import annotations

import datetime
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr

import zarrdb
from zarrdb import ZarrdbStore


def _dataset(times: int, start: int = 0) -> xr.Dataset:
    t = np.arange(start, start + times)
    values = (t[:, None] * 10 + np.arange(3)[None, :]).astype("float64")
    return xr.Dataset({"temperature": (("time", "x"), values)}, coords={"time": t, "x": np.arange(3)})


def _tagged(path: Path, times: int, tag: str) -> tuple[ZarrdbStore, xr.Dataset]:
    """A database with history holding ``_dataset(times)``, tagged ``tag``."""
    store = ZarrdbStore(path, history=True)
    ds = _dataset(times)
    ds.to_zarr(store, consolidated=False, zarr_format=3)
    store.tag(tag)
    return store, ds


def test_versions_tags_and_log(tmp_path: Path) -> None:
    path = tmp_path / "h.zarrdb"
    store = ZarrdbStore(path, history=True)
    a = zarr.create_array(store, name="a", shape=(4,), chunks=(2,), dtype="int32")
    a[:] = [1, 2, 3, 4]
    first = store.tag("v1")
    with store.transaction(message="zero the front", author="tester") as tx:
        zarr.open_array(tx, path="a")[:2] = [0, 0]

    old = ZarrdbStore(path, version="v1")
    assert old.read_only and old.with_read_only(True).read_only
    with pytest.raises(ValueError):
        old.with_read_only(False)
    assert zarr.open_array(old, path="a", mode="r")[:].tolist() == [1, 2, 3, 4]
    assert zarr.open_array(ZarrdbStore(path, version=first), path="a", mode="r")[:].tolist() == [1, 2, 3, 4]
    assert zarr.open_array(store, path="a", mode="r")[:].tolist() == [0, 0, 3, 4]

    log = store.log()
    assert isinstance(log[0], zarrdb.Commit)
    assert (log[0].message, log[0].author, log[0].parent) == ("zero the front", "tester", first)
    assert log[-1].message == "history begins" and log[-1].parent is None
    assert all(newer.time > older.time for newer, older in zip(log, log[1:]))
    assert store.tags() == {"v1": first}
    # [0, 0] is the fill value: zarr-python removes the chunk.
    [(key, before, after)] = store.diff("v1")
    assert (key, after) == ("a/c/0", None) and before
    assert store.diff("main", "v1") == [("a/c/0", None, before)]
    by_time = ZarrdbStore(path, as_of=next(c.time for c in log if c.id == first))
    assert zarr.open_array(by_time, path="a", mode="r")[:].tolist() == [1, 2, 3, 4]

    # A version store reopens by name in another process (dask's process scheduler).
    again = pickle.loads(pickle.dumps(old))
    assert again == old and again != store
    assert zarr.open_array(again, path="a", mode="r")[:].tolist() == [1, 2, 3, 4]


def test_expire_and_collect(tmp_path: Path) -> None:
    path = tmp_path / "e.zarrdb"
    store = ZarrdbStore(path, history=True)
    zarr.create_array(store, name="a", shape=(4096,), chunks=(2048,), dtype="int32", compressors=None)
    for round in range(1, 5):
        with store.transaction(message=f"round {round}") as tx:
            zarr.open_array(tx, path="a")[:] = np.full(4096, round, dtype="int32")
    log = store.log()
    assert [c.message for c in log[:4]] == ["round 4", "round 3", "round 2", "round 1"]
    kept = store.tag("kept", at=log[2].id)
    assert store.expire("main") == log[0].id
    with pytest.raises(zarrdb.HistoryError) as expired:
        zarr.open_array(ZarrdbStore(path, version=log[1].id), path="a", mode="r")
    assert expired.value.kind == "expired"
    freed = store.collect()
    assert isinstance(freed, zarrdb.Collection)
    # The versions of rounds 1 and 3 read two 8 KiB chunks each, which no kept version reads;
    # the tagged version of round 2 keeps its own.
    assert (freed.values, freed.bytes) == (4, 4 * 8192)
    assert store.collect() == (0, 0, 0)
    assert [c.id for c in store.log()] == [log[0].id, kept]
    assert (zarr.open_array(ZarrdbStore(path, version="kept"), path="a", mode="r")[:] == 2).all()
    assert (zarr.open_array(store, path="a", mode="r")[:] == 4).all()
    # By age: nothing is as old as a day, so the horizon stays where it is.
    assert store.expire(older_than=datetime.timedelta(days=1)) == log[0].id
    fresh = ZarrdbStore(tmp_path / "fresh.zarrdb", history=True)
    assert fresh.expire(older_than=datetime.timedelta(days=1)) is None
    with pytest.raises(ValueError):
        store.expire()
    with pytest.raises(ValueError):
        ZarrdbStore(path, version="kept").collect()


def test_history_errors_have_kinds(tmp_path: Path) -> None:
    path = tmp_path / "h.zarrdb"
    store = ZarrdbStore(path, history=True)
    zarr.create_group(store)
    store.tag("v1")
    with pytest.raises(zarrdb.HistoryError) as taken:
        store.tag("v1")
    assert taken.value.kind == "tag_exists"
    store.delete_tag("v1")
    with pytest.raises(zarrdb.HistoryError) as deleted:
        store.tag("v1")
    assert deleted.value.kind == "tag_deleted"
    with pytest.raises(zarrdb.HistoryError) as missing:
        zarr.open_group(ZarrdbStore(path, version="nope"), mode="r")
    assert missing.value.kind == "not_found"
    with pytest.raises(zarrdb.HistoryError) as invalid:
        store.tag("a@b")
    assert invalid.value.kind == "invalid_name"
    with pytest.raises(ValueError):
        ZarrdbStore(path, version="v1", as_of=0.0)

    plain = ZarrdbStore(tmp_path / "plain.zarrdb")
    zarr.create_group(plain)
    with pytest.raises(zarrdb.HistoryError) as off:
        plain.log()
    assert off.value.kind == "history_off"


def test_restore_after_a_bad_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "run.zarrdb"
    store, good = _tagged(path, 6, "good")
    bad = good.copy(deep=True)
    bad["temperature"][:] = -1.0
    bad.to_zarr(ZarrdbStore(path), mode="w", consolidated=False, zarr_format=3)
    assert (xr.open_zarr(ZarrdbStore(path, read_only=True), consolidated=False)["temperature"] == -1).all()

    store.restore("good")
    back = xr.open_zarr(ZarrdbStore(path, read_only=True), chunks=None, consolidated=False)
    xr.testing.assert_identical(back.load(), good)
    messages = [c.message for c in store.log()]
    assert messages[0] == 'restore / to tag "good"', messages
    # The bad version is still there, one commit back.
    bad_id = store.log()[1].id
    worse = xr.open_zarr(ZarrdbStore(path, version=bad_id), chunks=None, consolidated=False)
    assert (worse["temperature"] == -1).all()


APPENDER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import xarray as xr
    from zarrdb import ZarrdbStore

    path, rounds = sys.argv[1], int(sys.argv[2])
    for i in range(rounds):
        start = 4 + 2 * i
        t = np.arange(start, start + 2)
        values = (t[:, None] * 10 + np.arange(3)[None, :]).astype("float64")
        block = xr.Dataset({"temperature": (("time", "x"), values)}, coords={"time": t, "x": np.arange(3)})
        block.to_zarr(ZarrdbStore(path), append_dim="time", consolidated=False)
    """
)


def test_xarray_reads_a_tag_while_another_process_appends(tmp_path: Path) -> None:
    path = tmp_path / "growing.zarrdb"
    store, first = _tagged(path, 4, "v1")
    rounds = 12
    child = subprocess.Popen(
        [sys.executable, "-c", APPENDER, str(path), str(rounds)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    reads = 0
    try:
        while child.poll() is None or reads < 2:
            tagged = xr.open_zarr(ZarrdbStore(path, version="v1"), chunks=None, consolidated=False)
            xr.testing.assert_identical(tagged.load(), first)
            reads += 1
        _, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    head = xr.open_zarr(ZarrdbStore(path, read_only=True), chunks=None, consolidated=False).load()
    xr.testing.assert_identical(head, _dataset(4 + 2 * rounds))
    assert len(store.log()) >= 2 + rounds, "each append is at least one version"


def test_branches_reset_and_merge(tmp_path: Path) -> None:
    path = tmp_path / "b.zarrdb"
    store, ds = _tagged(path, 4, "good")
    good = store.tags()["good"]
    bad = ds.copy(deep=True)
    bad["temperature"][:] = -1.0
    bad.to_zarr(store, mode="r+", consolidated=False, zarr_format=3)
    bad_id = store.create_branch("keep-bad")
    assert store.branches() == {"main": bad_id, "keep-bad": bad_id}

    # Undo the bad overwrite by moving main back; the bad version stays on its branch.
    assert store.reset("main", "good") == good
    xr.testing.assert_equal(xr.open_zarr(store, consolidated=False).load(), ds)
    kept = xr.open_zarr(ZarrdbStore(path, version="keep-bad"), consolidated=False).load()
    assert (kept["temperature"].values == -1.0).all()

    assert store.merge("good", into="keep-bad") == ("up_to_date", bad_id)
    assert store.merge("keep-bad") == ("fast_forward", bad_id)
    assert (xr.open_zarr(store, consolidated=False)["temperature"].values == -1.0).all()

    with pytest.raises(zarrdb.HistoryError) as taken:
        store.create_branch("good")
    assert taken.value.kind == "name_taken"
    with pytest.raises(zarrdb.HistoryError) as main:
        store.delete_branch("main")
    assert main.value.kind == "invalid_name"
    store.delete_branch("keep-bad")
    assert store.branches() == {"main": bad_id}
