"""Misusing transactions ends in a typed error at once, never a hang: writing through the outer
store inside its own ``transaction()`` block (zarr-python's synchronous API, the async one, the
codec pipeline), nesting a second ``transaction()`` on one database, and using a transaction's
store or the transaction itself after it ended. Each scenario runs in a thread given one second;
a scenario still running then is a hang and fails the test."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from zarr.core.buffer import cpu, default_buffer_prototype

import zarrdb
from zarrdb import ZarrdbStore

BOUND = 1.0


def _within_bound(scenario: Callable[[], Any]) -> Any:
    """Run ``scenario`` in a thread; fail if it has not ended after ``BOUND`` seconds, else
    return its result or raise its exception."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = scenario()
        except BaseException as e:  # handed to the test's thread
            outcome["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND)
    assert not thread.is_alive(), f"still running after {BOUND} s: a hang"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("result")


def _array(path: Path) -> tuple[ZarrdbStore, zarr.Array]:
    store = ZarrdbStore(path)
    array = zarr.create_array(store, name="a", shape=(8,), chunks=(4,), dtype="int32", fill_value=0)
    return store, array


def _refused_as_deadlock(excinfo: pytest.ExceptionInfo[zarrdb.TransactionError], store: ZarrdbStore) -> None:
    assert excinfo.value.kind == "would_deadlock"
    assert excinfo.value.path == store.path
    assert "transaction() block" in str(excinfo.value)


def test_zarr_write_through_outer_store_inside_its_transaction(tmp_path: Path) -> None:
    store, array = _array(tmp_path / "t.zarrdb")
    # Warm up the first write (opening, zarr's loop) outside the bound.
    array[:] = np.arange(8, dtype="int32")

    def scenario() -> None:
        with store.transaction() as tx:
            tx_array = zarr.open_array(tx, path="a")
            tx_array[0:2] = [10, 11]
            array[4:6] = [40, 41]  # the outer store: would wait for this very block

    with pytest.raises(zarrdb.TransactionError) as excinfo:
        _within_bound(scenario)
    _refused_as_deadlock(excinfo, store)
    # The block raised, so its transaction aborted: nothing of it was committed.
    assert array[:].tolist() == list(range(8))


def test_async_write_through_outer_store_inside_atransaction(tmp_path: Path) -> None:
    store = ZarrdbStore(tmp_path / "t.zarrdb")
    store.set_sync("k", cpu.Buffer.from_bytes(b"before"))

    async def main() -> None:
        async with store.atransaction() as tx:
            await tx.set("k", cpu.Buffer.from_bytes(b"inside"))
            await store.set("k", cpu.Buffer.from_bytes(b"outer"))

    with pytest.raises(zarrdb.TransactionError) as excinfo:
        _within_bound(lambda: asyncio.run(main()))
    _refused_as_deadlock(excinfo, store)
    value = store.get_sync("k", prototype=default_buffer_prototype())
    assert value is not None and value.to_bytes() == b"before"


def test_codec_pipeline_write_through_outer_store_inside_its_transaction(tmp_path: Path) -> None:
    with zarr.config.set({"codec_pipeline.path": "zarrdb.CodecPipeline"}):
        store, array = _array(tmp_path / "t.zarrdb")
        array[:] = np.arange(8, dtype="int32")

        def scenario() -> None:
            with store.transaction():
                array[0:8] = 7  # a box: the engine's region write, through the outer store

        with pytest.raises(zarrdb.TransactionError) as excinfo:
            _within_bound(scenario)
        _refused_as_deadlock(excinfo, store)
        assert array[:].tolist() == list(range(8))


def test_nested_transaction_on_one_store(tmp_path: Path) -> None:
    store = ZarrdbStore(tmp_path / "t.zarrdb")
    store.set_sync("k", cpu.Buffer.from_bytes(b"v"))

    def scenario() -> None:
        with store.transaction():
            with store.transaction():
                pass

    with pytest.raises(zarrdb.TransactionError) as excinfo:
        _within_bound(scenario)
    _refused_as_deadlock(excinfo, store)
    # Both ended: a new transaction begins at once.

    def again() -> None:
        with store.transaction() as tx:
            tx.set_sync("k", cpu.Buffer.from_bytes(b"again"))

    _within_bound(again)


def test_nested_transaction_through_another_store_of_the_database(tmp_path: Path) -> None:
    path = tmp_path / "t.zarrdb"
    store = ZarrdbStore(path)
    other = ZarrdbStore(str(path))  # the same file, another store object

    def scenario() -> None:
        with store.transaction():
            with other.transaction():
                pass

    with pytest.raises(zarrdb.TransactionError) as excinfo:
        _within_bound(scenario)
    assert excinfo.value.kind == "would_deadlock"


@pytest.mark.parametrize("link", ["hard", "symbolic"])
def test_write_through_another_name_of_the_file_inside_a_transaction(tmp_path: Path, link: str) -> None:
    # Another name of the same file opens another native handle, whose write would wait for
    # the block's own writer lock: refused as a deadlock, whatever the name.
    store, array = _array(tmp_path / "t.zarrdb")
    array[:] = np.arange(8, dtype="int32")
    alias = tmp_path / "alias.zarrdb"
    if link == "hard":
        os.link(store.path, alias)
    else:
        os.symlink(store.path, alias)
    other = zarr.open_array(ZarrdbStore(alias), path="a")
    other[0:1] = [0]  # opened outside the bound

    def scenario() -> None:
        with store.transaction():
            other[4:6] = [40, 41]

    with pytest.raises(zarrdb.TransactionError) as excinfo:
        _within_bound(scenario)
    assert excinfo.value.kind == "would_deadlock"
    assert array[:].tolist() == list(range(8))


def test_transaction_store_used_after_commit(tmp_path: Path) -> None:
    store = ZarrdbStore(tmp_path / "t.zarrdb")
    with store.transaction() as tx:
        tx.set_sync("k", cpu.Buffer.from_bytes(b"committed"))

    with pytest.raises(zarrdb.TransactionClosedError) as excinfo:
        _within_bound(lambda: tx.set_sync("k", cpu.Buffer.from_bytes(b"late")))
    assert excinfo.value.kind == "transaction_closed"
    # Also what zarr-python expects of a closed store, and a zarrdb.TransactionError.
    assert isinstance(excinfo.value, ValueError)
    assert isinstance(excinfo.value, zarrdb.TransactionError)
    with pytest.raises(zarrdb.TransactionClosedError):
        _within_bound(lambda: tx.get_sync("k"))
    value = store.get_sync("k")
    assert value is not None and value.to_bytes() == b"committed"


def test_native_transaction_committed_twice(tmp_path: Path) -> None:
    store = ZarrdbStore(tmp_path / "t.zarrdb")
    store.set_sync("k", cpu.Buffer.from_bytes(b"v"))
    txn, _ = store._begin()
    txn.commit()
    with pytest.raises(zarrdb.Error) as excinfo:
        _within_bound(txn.commit)
    assert excinfo.value.kind == "transaction_closed"
    assert excinfo.value.operation == "commit"


def test_another_thread_still_waits_for_the_transaction(tmp_path: Path) -> None:
    # Not misuse: a write from another thread waits for the block and then lands.
    store = ZarrdbStore(tmp_path / "t.zarrdb")
    store.set_sync("k", cpu.Buffer.from_bytes(b"v"))
    landed = threading.Event()

    def other_writer() -> None:
        store.set_sync("other", cpu.Buffer.from_bytes(b"x"))
        landed.set()

    with store.transaction() as tx:
        writer = threading.Thread(target=other_writer)
        writer.start()
        assert not landed.wait(0.3)  # it waits for the transaction
        tx.set_sync("k", cpu.Buffer.from_bytes(b"in tx"))
    writer.join(5)
    assert landed.is_set()
    value = store.get_sync("other")
    assert value is not None and value.to_bytes() == b"x"
