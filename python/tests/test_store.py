"""zarr-python's own store conformance suite (``zarr.testing.store.StoreTests``) on ZarrdbStore,
plus the checks it does not make: transactions, snapshots, typed errors, sharing one file."""

from __future__ import annotations

import pickle
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import zarr
from zarr.core.buffer import Buffer, cpu, default_buffer_prototype
from zarr.testing.store import StoreTests

import zarrdb
from zarrdb import _native, ZarrdbStore


def _native_store(store: ZarrdbStore) -> _native.Store:
    # The suite's helpers must bypass the store's own methods: go to the engine directly.
    return _native.Database.open(store.path, True).store().with_checks(False)


class TestZarrdbStore(StoreTests[ZarrdbStore, cpu.Buffer]):
    store_cls = ZarrdbStore
    buffer_cls = cpu.Buffer

    async def set(self, store: ZarrdbStore, key: str, value: Buffer) -> None:
        _native_store(store).set(key, value.to_bytes())

    async def get(self, store: ZarrdbStore, key: str) -> Buffer:
        value = _native_store(store).get(key)
        assert value is not None, key
        return self.buffer_cls.from_bytes(value)

    @pytest.fixture
    def store_kwargs(self, tmp_path: Path) -> dict[str, Any]:
        # The suite checks the plain key/value contract: it writes arbitrary bytes under
        # zarr.json keys, which the default store refuses (test_metadata_checks.py).
        return {"path": str(tmp_path / "data.zarrdb"), "validate_metadata": False}

    def test_store_repr(self, store: ZarrdbStore) -> None:
        assert repr(store) == f"ZarrdbStore({store.path!r})"
        assert str(store) == f"zarrdb://{store.path}"

    def test_store_supports_writes(self, store: ZarrdbStore) -> None:
        assert store.supports_writes

    def test_store_supports_listing(self, store: ZarrdbStore) -> None:
        assert store.supports_listing


_GROUP = b'{"zarr_format": 3, "node_type": "group"}'


def _buf(data: bytes) -> Buffer:
    return cpu.Buffer.from_bytes(data)


async def _read(store: ZarrdbStore, key: str) -> bytes | None:
    value = await store.get(key, default_buffer_prototype())
    return None if value is None else value.to_bytes()


async def test_transaction_commits_all_or_nothing(tmp_path: Path) -> None:
    store = await ZarrdbStore.open(tmp_path / "t.zarrdb")
    with store.transaction() as tx:
        await tx.set("a/c/0", _buf(b"1"))
        await tx.set("b/c/0", _buf(b"2"))
        assert await _read(tx, "a/c/0") == b"1"  # reads see the transaction's own writes
        assert await _read(store, "a/c/0") is None  # others do not, before the commit
    assert await _read(store, "a/c/0") == b"1"
    assert await _read(store, "b/c/0") == b"2"

    with pytest.raises(RuntimeError, match="boom"):
        with store.transaction() as tx:
            await tx.set("a/c/0", _buf(b"changed"))
            await tx.delete("b/c/0")
            raise RuntimeError("boom")
    assert await _read(store, "a/c/0") == b"1"
    assert await _read(store, "b/c/0") == b"2"
    with pytest.raises(ValueError, match="closed"):
        await tx.set("x", _buf(b"after the end"))


async def test_transaction_groups_zarr_writes(tmp_path: Path) -> None:
    store = await ZarrdbStore.open(tmp_path / "z.zarrdb")
    zarr.open_group(store, mode="w").create_array("a", shape=(4,), dtype="int32")
    with pytest.raises(RuntimeError):
        with store.transaction() as tx:
            group = zarr.open_group(tx)
            group["a"][:] = [1, 2, 3, 4]
            group.create_array("b", shape=(2,), dtype="int8")
            assert zarr.open_group(tx.with_read_only(True), mode="r")["a"][1] == 2
            raise RuntimeError("abort")
    group = zarr.open_group(store, mode="r")
    assert list(group.array_keys()) == ["a"]
    assert group["a"][:].tolist() == [0, 0, 0, 0]


def test_set_if_absent_is_atomic_across_threads(tmp_path: Path) -> None:
    db = _native.Database.open(tmp_path / "race.zarrdb", True)
    with ThreadPoolExecutor(8) as pool:
        won = list(pool.map(lambda i: db.set_if_absent("k", b"%d" % i), range(32)))
    assert won.count(True) == 1
    assert bytes(db.store().get("k")) == b"%d" % won.index(True)


async def test_snapshot_is_fixed(tmp_path: Path) -> None:
    store = await ZarrdbStore.open(tmp_path / "s.zarrdb")
    await store.set("k", _buf(b"old"))
    snap = store.snapshot()
    await store.set("k", _buf(b"new"))
    await store.set("k2", _buf(b"x"))
    assert await _read(snap, "k") == b"old"
    assert [k async for k in snap.list()] == ["k"]
    assert snap.read_only
    with pytest.raises(ValueError, match="read-only"):
        await snap.set("k", _buf(b"no"))
    with pytest.raises(TypeError, match="pickled"):
        pickle.dumps(snap)


async def test_reserved_prefix_is_refused_and_never_listed(tmp_path: Path) -> None:
    store = await ZarrdbStore.open(tmp_path / "r.zarrdb")
    await store.set("zarr.json", _buf(_GROUP))
    assert [k async for k in store.list()] == ["zarr.json"]
    with pytest.raises(zarrdb.StoreError, match="reserved"):
        await store.set("__zarrdb/x", _buf(b"1"))
    assert issubclass(zarrdb.StoreError, zarrdb.Error)


async def test_open_errors_are_typed(tmp_path: Path) -> None:
    not_a_db = tmp_path / "plain.txt"
    not_a_db.write_bytes(b"hello, not a database")
    with pytest.raises(zarrdb.OpenError):
        await ZarrdbStore.open(not_a_db)
    with pytest.raises(ValueError, match="backend"):
        ZarrdbStore(tmp_path / "x", backend="nope")  # type: ignore[arg-type]


async def test_read_only_store_on_missing_path_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "later.zarrdb"
    reader = await ZarrdbStore.open(path, read_only=True)
    assert await reader.is_empty("")
    assert not path.exists()  # opening read-only does not create the file
    writer = reader.with_read_only(False)
    await writer.set("zarr.json", _buf(_GROUP))
    assert await _read(reader, "zarr.json") == _GROUP


@pytest.mark.parametrize("backend", ["lmdb", "sled"])
async def test_other_backends(tmp_path: Path, backend: str) -> None:
    store = await ZarrdbStore.open(tmp_path / backend, backend=backend)  # type: ignore[arg-type]
    await store.set("a/b", _buf(b"v"))
    assert await _read(store, "a/b") == b"v"
    assert [k async for k in store.list_dir("a")] == ["b"]


def test_read_length_decides_where_a_read_runs() -> None:
    from zarrdb._placement import read_length as _read_length

    sizes = {"big": 5 << 20, "small": 10}
    size = lambda key: (lambda: sizes.get(key))  # noqa: E731
    assert _read_length(None, size("big")) == 5 << 20
    assert _read_length(None, size("absent")) == 0
    assert _read_length((100, 20), size("big")) == 20  # the range says, no lookup needed
    assert _read_length((None, 7), size("big")) == 7
    assert _read_length((1 << 20, None), size("big")) == 4 << 20
    assert _read_length((50, None), size("small")) == 0
