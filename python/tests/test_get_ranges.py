"""``ZarrdbStore.get_ranges`` (zarr-python 3.2+): many byte ranges of one value in one engine call,
the same bytes the base class's coalescing reads give; an absent key is the base class's
``FileNotFoundError`` in an exception group; sharded arrays read back through it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import zarr
from zarr.abc.store import OffsetByteRequest, RangeByteRequest, Store, SuffixByteRequest
from zarr.core.buffer import cpu, default_buffer_prototype

from zarrdb import ZarrdbStore

if not hasattr(Store, "get_ranges"):
    pytest.skip("zarr-python before 3.2 has no Store.get_ranges", allow_module_level=True)

RANGES = [RangeByteRequest(0, 4), OffsetByteRequest(90), SuffixByteRequest(3), None, RangeByteRequest(10, 20)]


async def _collect(batches: object) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    async for batch in batches:  # type: ignore[attr-defined]
        for index, buffer in batch:
            assert buffer is not None
            out[index] = buffer.to_bytes()
    return out


async def test_get_ranges_reads_what_the_base_class_reads(tmp_path: Path) -> None:
    store = ZarrdbStore(tmp_path / "r.zarrdb")
    data = bytes(range(100))
    await store.set("k", cpu.Buffer.from_bytes(data))
    prototype = default_buffer_prototype()
    ours = await _collect(store.get_ranges("k", RANGES, prototype=prototype))
    base = await _collect(Store.get_ranges(store, "k", RANGES, prototype=prototype))
    assert ours == base == {0: data[0:4], 1: data[90:], 2: data[-3:], 3: data, 4: data[10:20]}


async def test_get_ranges_of_an_absent_key(tmp_path: Path) -> None:
    store = ZarrdbStore(tmp_path / "r.zarrdb")
    with pytest.raises(BaseExceptionGroup) as excinfo:
        await _collect(store.get_ranges("absent", RANGES, prototype=default_buffer_prototype()))
    assert excinfo.group_contains(FileNotFoundError)


def test_sharded_array_reads_back(tmp_path: Path) -> None:
    store = ZarrdbStore(tmp_path / "r.zarrdb")
    values = np.arange(64 * 64, dtype="int32").reshape(64, 64)
    array = zarr.create_array(store, name="s", shape=(64, 64), chunks=(8, 8), shards=(32, 32), dtype="int32")
    array[:] = values
    assert np.array_equal(array[3:41, 5:60], values[3:41, 5:60])
