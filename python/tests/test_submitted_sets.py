"""Sets submitted to the committer thread (``python/src/submit.rs``) and settled on the loop.

An awaited ``set`` of a small data value returns only once its write is committed, however many
are in flight together; each keeps its own outcome (a refused key fails alone, not its group);
the last of several sets of one key submitted wins; a cancelled awaiter does not stall the ones after it;
loops in several threads, loops that cannot watch a descriptor and forked children all work.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from pathlib import Path

import pytest
from zarr.core.buffer import default_buffer_prototype

import zarrdb
from zarrdb import ZarrdbStore, _native

_proto = default_buffer_prototype()


def _buf(data: bytes) -> object:
    return _proto.buffer.from_bytes(data)


def _committed(path: Path, key: str) -> bytes | None:
    """What the file holds for ``key``, read through a fresh snapshot."""
    value = _native.Database.open(path, False).snapshot().get(key)
    return None if value is None else bytes(value)


async def test_many_sets_in_flight_are_all_committed(tmp_path: Path) -> None:
    path = tmp_path / "many.zarrdb"
    store = ZarrdbStore(path)
    values = {f"a/c/{i}": i.to_bytes(4, "little") * 1000 for i in range(500)}
    await asyncio.gather(*(store.set(k, _buf(v)) for k, v in values.items()))
    for key, value in values.items():
        assert _committed(path, key) == value


async def test_the_last_submitted_set_of_a_key_wins(tmp_path: Path) -> None:
    path = tmp_path / "order.zarrdb"
    # Open first: each set then reaches its submit in the order gather starts them.
    store = await ZarrdbStore.open(path)
    await asyncio.gather(*(store.set("k", _buf(bytes([i]))) for i in range(200)))
    assert _committed(path, "k") == bytes([199])


async def test_a_refused_key_fails_alone(tmp_path: Path) -> None:
    path = tmp_path / "refused.zarrdb"
    # Open first, so the three are submitted together (one group, as a rule).
    store = await ZarrdbStore.open(path)
    results = await asyncio.gather(
        store.set("good/0", _buf(b"0")),
        store.set("__zarrdb/bad", _buf(b"x")),
        store.set("good/1", _buf(b"1")),
        return_exceptions=True,
    )
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], zarrdb.StoreError) and "reserved" in str(results[1])
    assert _committed(path, "good/0") == b"0" and _committed(path, "good/1") == b"1"
    assert _native.Database.open(path, False).snapshot().list_prefix("") == ["good/0", "good/1"]


async def test_a_cancelled_set_does_not_stall_later_ones(tmp_path: Path) -> None:
    path = tmp_path / "cancel.zarrdb"
    store = ZarrdbStore(path)
    task = asyncio.ensure_future(store.set("x", _buf(b"1")))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(store.set("y", _buf(b"2")), timeout=30)
    assert _committed(path, "y") == b"2"


def test_loops_in_several_threads_share_one_database(tmp_path: Path) -> None:
    path = tmp_path / "threads.zarrdb"
    errors: list[BaseException] = []

    def writer(t: int) -> None:
        async def main() -> None:
            store = ZarrdbStore(path)
            await asyncio.gather(*(store.set(f"t{t}/{i}", _buf(bytes([t, i]))) for i in range(100)))

        try:
            asyncio.run(main())
        except BaseException as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors
    for t in range(4):
        for i in range(100):
            assert _committed(path, f"t{t}/{i}") == bytes([t, i])


class _NoReaderLoop(asyncio.SelectorEventLoop):
    """A loop that cannot watch a descriptor, as Windows' proactor loop cannot."""

    def add_reader(self, *args: object) -> None:
        raise NotImplementedError


def test_a_loop_without_add_reader_still_sets(tmp_path: Path) -> None:
    path = tmp_path / "noreader.zarrdb"

    async def main() -> None:
        store = ZarrdbStore(path)
        await asyncio.gather(*(store.set(f"k/{i}", _buf(bytes([i]))) for i in range(50)))

    loop = _NoReaderLoop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert all(_committed(path, f"k/{i}") == bytes([i]) for i in range(50))


def _child_sets(path: str) -> None:
    async def main() -> None:
        store = ZarrdbStore(path)
        await asyncio.gather(*(store.set(f"child/{i}", _buf(bytes([i]))) for i in range(50)))

    asyncio.run(main())


async def test_a_forked_child_gets_a_committer_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "fork.zarrdb"
    store = ZarrdbStore(path)
    # The parent's committer thread is running when the child is forked.
    await store.set("parent", _buf(b"p"))
    store.close()
    child = multiprocessing.get_context("fork").Process(target=_child_sets, args=(str(path),))
    child.start()
    child.join(timeout=120)
    assert child.exitcode == 0
    assert all(_committed(path, f"child/{i}") == bytes([i]) for i in range(50))
    assert _committed(path, "parent") == b"p"


def test_submit_refuses_documents_and_transaction_stores(tmp_path: Path) -> None:
    db = _native.Database.open(tmp_path / "refuse.zarrdb", True)
    completions = _native.Completions()
    with pytest.raises(ValueError, match="set\\(\\)"):
        db.store().submit("zarr.json", b"{}", completions, 0)
    txn = db.begin_write()
    try:
        with pytest.raises(ValueError, match="auto-commit"):
            txn.store().submit("k", b"1", completions, 1)
    finally:
        txn.abort()
    assert completions.drain() == []
