"""``async with store.atransaction() as tx``: commits when the block ends, aborts when it raises,
and waits for another transaction without blocking the event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
import zarr.api.asynchronous as azarr
from zarr.core.buffer import cpu, default_buffer_prototype

from zarrdb import ZarrdbStore

T = TypeVar("T")
# Bounds a scenario whose failure is a blocked event loop, which no asyncio timeout can interrupt.
BOUND = 60.0


def _run_bounded(scenario: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``scenario`` on a fresh event loop in a thread, failing (not hanging) if it never ends."""
    outcome: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(asyncio.run(scenario()))
        except BaseException as e:  # re-raised below, on the test's thread
            errors.append(e)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(BOUND)
    assert not thread.is_alive(), "the scenario never ended: its event loop was blocked"
    if errors:
        raise errors[0]
    return outcome[0]


def _bytes(data: bytes) -> cpu.Buffer:
    return cpu.Buffer.from_bytes(data)


async def _hold(store: ZarrdbStore, is_open: asyncio.Event, release: asyncio.Event) -> None:
    """Open a transaction that writes "first", say so, and keep it open until ``release``."""
    async with store.atransaction() as tx:
        await tx.set("first", _bytes(b"1"))
        is_open.set()
        await release.wait()


async def test_the_block_commits_when_it_ends(tmp_path: Path) -> None:
    store = await ZarrdbStore.open(tmp_path / "t.zarrdb")
    async with store.atransaction() as tx:
        arr = await azarr.create_array(tx, name="a", shape=(4,), dtype="int32")
        await arr.setitem(slice(None), np.arange(4, dtype="int32"))
        assert not await store.exists("a/zarr.json")  # not visible outside before the commit
    arr = await azarr.open_array(store=store, path="a", mode="r")
    assert (await arr.getitem(slice(None))).tolist() == [0, 1, 2, 3]


async def test_the_block_aborts_when_it_raises(tmp_path: Path) -> None:
    store = await ZarrdbStore.open(tmp_path / "t.zarrdb")
    await store.set("kept", _bytes(b"old"))
    with pytest.raises(RuntimeError, match="boom"):
        async with store.atransaction() as tx:
            await tx.set("kept", _bytes(b"new"))
            await azarr.create_array(tx, name="a", shape=(4,), dtype="int32")
            raise RuntimeError("boom")
    assert not await store.exists("a/zarr.json")
    kept = await store.get("kept", default_buffer_prototype())
    assert kept is not None and kept.to_bytes() == b"old"
    with pytest.raises(ValueError):
        await tx.get("kept", default_buffer_prototype())  # the transaction's store is closed


def test_the_loop_runs_while_a_transaction_waits_for_another(tmp_path: Path) -> None:
    store = ZarrdbStore(tmp_path / "t.zarrdb")

    async def scenario() -> tuple[list[str], bytes | None]:
        events: list[str] = []
        first_open, release, second_waiting = asyncio.Event(), asyncio.Event(), asyncio.Event()
        second_saw: list[bytes | None] = []

        async def second() -> None:
            await first_open.wait()
            second_waiting.set()
            async with store.atransaction() as tx:  # waits for the first's writer lock
                events.append("second began")
                seen = await tx.get("first", default_buffer_prototype())
                second_saw.append(None if seen is None else seen.to_bytes())

        holder = asyncio.create_task(_hold(store, first_open, release))
        waiter = asyncio.create_task(second())
        await second_waiting.wait()
        # The second is waiting to begin. Were its wait on the loop's thread, this task would
        # never run again and the first transaction would never be released.
        for _ in range(100):
            await asyncio.sleep(0)
        events.append("loop ran")
        release.set()
        await asyncio.gather(holder, waiter)
        return events, second_saw[0]

    events, second_saw = _run_bounded(scenario)
    assert events == ["loop ran", "second began"]
    assert second_saw == b"1"  # it began after the first had committed


def test_a_transaction_cancelled_while_waiting_to_begin_is_given_up(tmp_path: Path) -> None:
    store = ZarrdbStore(tmp_path / "t.zarrdb")

    async def scenario() -> bool:
        first_open, release = asyncio.Event(), asyncio.Event()
        body_ran = False

        async def cancelled() -> None:
            nonlocal body_ran
            async with store.atransaction() as tx:
                body_ran = True
                await tx.set("cancelled", _bytes(b"2"))

        holder = asyncio.create_task(_hold(store, first_open, release))
        await first_open.wait()
        waiter = asyncio.create_task(cancelled())
        for _ in range(10):
            await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        release.set()
        await holder
        # The cancelled transaction begins once the first ends and is aborted then: the writer
        # lock is free again for the next one.
        async with store.atransaction() as tx:
            await tx.set("third", _bytes(b"3"))
        assert await store.exists("third")
        assert not await store.exists("cancelled")
        return body_ran

    assert _run_bounded(scenario) is False
