"""Why partial-chunk writes need a transaction: one forced interleaving, without and with one.

Writer A writes ``arr[0::2] = 1`` and writer B ``arr[1::2] = 2`` into the same single chunk.
zarr-python does each as a read-modify-write of the chunk above the store. A store wrapper pauses
A after it has read the chunk, just before it stores it, and runs B meanwhile:
- plainly, B reads the chunk, patches it and stores it, and then A stores its copy, made from
  what it read before B: B's update is lost, deterministically, on any store;
- inside transactions, B's transaction cannot begin while A's is open (the writer lock), so B
  reads the chunk only after A has committed, and both updates survive.
So the stress test of ``test_concurrent_partial_writes.py`` checks a guarantee that plain writes
do not give.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import zarr
from zarr.core.buffer import Buffer
from zarr.storage import WrapperStore

from zarrdb import ZarrdbStore

CHUNK_PREFIX = "a/c/"
# How long A, paused inside its transaction, gives B to finish: B cannot, since it waits for A's
# writer lock (a bound on the wait, not a timing being measured: without the lock B finishes in
# milliseconds, as the plain case shows).
PAUSE = 1.0
BOUND = 60.0


class _Once:
    """A hook run once, by whichever copy of the wrapper stores a chunk first."""

    def __init__(self, hook: Callable[[], None]) -> None:
        self._hook: Callable[[], None] | None = hook
        self._lock = threading.Lock()

    def take(self) -> Callable[[], None] | None:
        with self._lock:
            hook, self._hook = self._hook, None
            return hook


class PauseBeforeChunkSet(WrapperStore[ZarrdbStore]):
    """Runs a hook (off the event loop) before the first chunk is stored: after zarr-python's
    read of the chunk, before its write."""

    def __init__(self, store: ZarrdbStore, hook: _Once) -> None:
        super().__init__(store)
        self._once = hook

    def _with_store(self, store: ZarrdbStore) -> PauseBeforeChunkSet:
        return type(self)(store, self._once)

    async def set(self, key: str, value: Buffer) -> None:
        hook = self._once.take() if key.startswith(CHUNK_PREFIX) else None
        if hook is not None:
            await asyncio.to_thread(hook)
        await self._store.set(key, value)


def _create(path: Path) -> ZarrdbStore:
    store = ZarrdbStore(path)
    zarr.create_array(store, name="a", shape=(8,), chunks=(8,), dtype="int32", fill_value=0)
    return store


def _final(store: ZarrdbStore) -> list[int]:
    return np.asarray(zarr.open_array(store, path="a", mode="r")[:]).tolist()


def test_plain_partial_writes_lose_an_update(tmp_path: Path) -> None:
    store = _create(tmp_path / "plain.zarrdb")
    b_done = threading.Event()

    def writer_b() -> None:
        zarr.open_array(store, path="a")[1::2] = 2
        b_done.set()

    def run_b_meanwhile() -> None:
        b = threading.Thread(target=writer_b)
        b.start()
        b.join(BOUND)

    zarr.open_array(PauseBeforeChunkSet(store, _Once(run_b_meanwhile)), path="a")[0::2] = 1
    assert b_done.is_set()  # B stored its chunk between A's read and A's write...
    assert _final(store) == [1, 0] * 4  # ...and A's write put B's elements back to the fill value


def test_the_same_interleaving_in_transactions_loses_nothing(tmp_path: Path) -> None:
    store = _create(tmp_path / "transactions.zarrdb")
    b_saw: list[list[int]] = []
    b_errors: list[BaseException] = []
    b_finished_while_a_was_open: list[bool] = []
    b = threading.Thread()

    def writer_b() -> None:
        try:
            with store.transaction() as tx:
                arr = zarr.open_array(tx, path="a")
                b_saw.append(np.asarray(arr[:]).tolist())
                arr[1::2] = 2
        except BaseException as e:  # re-raised by the test below
            b_errors.append(e)

    def run_b_meanwhile() -> None:
        nonlocal b
        b = threading.Thread(target=writer_b)
        b.start()
        b.join(PAUSE)
        b_finished_while_a_was_open.append(not b.is_alive())

    with store.transaction() as tx:
        zarr.open_array(PauseBeforeChunkSet(tx, _Once(run_b_meanwhile)), path="a")[0::2] = 1
    b.join(BOUND)
    assert not b.is_alive() and b_errors == []
    assert b_finished_while_a_was_open == [False]  # B waited for A's transaction to end...
    assert b_saw == [[1, 0] * 4]  # ...then read the chunk as A committed it...
    assert _final(store) == [1, 2] * 4  # ...so both updates are kept
