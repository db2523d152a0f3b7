"""`close()` lets go of the file at once, even while the store's worker threads are still busy
with the calls they finished for it.

A thread of the pool delivers a call's result before it lets go of it: its future is marked done
first, and the worker's own frame keeps the result until the thread returns to the pool. When
the result was a database handle (the store's, an array's), a close in that window left the file
held, and the CLI opening it from another process was refused as "locked" (a CI failure of
test_cli_interop.py, about one run in fifteen). The window is made wide here: each pool thread
waits after delivering a result, so a handle kept by the worker is still held when the store is
closed and the CLI runs."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import zarr
from zarrdb_cli import run_cli

from zarrdb import ZarrdbStore
from zarrdb._store import _in_worker

LINGER = 0.5


@pytest.fixture
def lingering_workers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Pool threads of zarrdb wait `LINGER` seconds after each result they deliver."""
    deliver = concurrent.futures.Future.set_result

    def set_result_then_linger(self: concurrent.futures.Future, result: object) -> None:
        deliver(self, result)
        if threading.current_thread().name.startswith("zarrdb"):
            time.sleep(LINGER)

    monkeypatch.setattr(concurrent.futures.Future, "set_result", set_result_then_linger)
    yield
    # Let the lingering threads finish before the next test reuses the pool.
    time.sleep(LINGER)


class Handle:
    """Stands for a database handle: something whose lifetime the test watches."""


def test_a_worker_keeps_no_result(lingering_workers: None) -> None:
    async def main() -> weakref.ref[Handle]:
        result = await _in_worker(Handle)
        watched = weakref.ref(result)
        del result
        return watched

    start = time.monotonic()
    watched = asyncio.run(main())
    gc.collect()
    assert watched() is None, "the worker still held the result after the caller had let go of it"
    # And that was checked while the worker was still lingering.
    assert time.monotonic() - start < LINGER


# redb in its multi-process mode (the default) lets the CLI read beside a live handle, so only the
# single-process mode shows a handle left open.
@pytest.mark.parametrize(
    ("backend", "multi_process"), [("redb", False), ("redb", True), ("sled", False)], ids=["redb", "redb-mp", "sled"]
)
def test_a_closed_store_lets_another_process_open_the_file(
    tmp_path: Path, backend: str, multi_process: bool, lingering_workers: None
) -> None:
    path = tmp_path / "closed.zarrdb"
    store = ZarrdbStore(path, backend=backend, multi_process=multi_process)
    root = zarr.open_group(store, mode="w")
    a = root.create_array("a", shape=(6,), chunks=(2,), dtype="int32", fill_value=0)
    a[:] = np.arange(6, dtype="int32")
    assert list(a[:]) == list(range(6))
    store.close()

    # A redb file open in single-process mode, or a sled one, is locked for every other process.
    assert "a" in run_cli("tree", str(path))
    run_cli("check", str(path))
