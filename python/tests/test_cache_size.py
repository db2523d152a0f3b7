"""``ZarrdbStore(cache_size=...)``: redb's page cache, from none to larger than the file.

The size changes only speed (docs/python.md), never what is read: values larger than the cache,
values spanning several of the engine's 512 KiB segments and many small values must read back
the same whatever the size, through zarr-python and byte ranges alike. A size that is not a
number of bytes is refused before anything opens, and the option survives pickling and
``with_read_only`` (dask's workers reopen the store with it).
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
import zarr
from zarr.core.buffer import default_buffer_prototype

from zarrdb import ZarrdbStore


def _values() -> dict[str, bytes]:
    rng = np.random.default_rng(15)
    values = {f"k/{i}": rng.bytes(int(n)) for i, n in enumerate([0, 1, 4096, 600_000, 3 << 20])}
    values.update({f"small/{i}": rng.bytes(100) for i in range(200)})
    return values


@pytest.mark.parametrize("cache_size", [0, 1 << 16, 1 << 20, 1 << 30])
async def test_every_cache_size_reads_back_what_was_written(tmp_path: Path, cache_size: int) -> None:
    path = tmp_path / f"c{cache_size}.zarrdb"
    values = _values()
    store = ZarrdbStore(path, cache_size=cache_size)
    proto = default_buffer_prototype()
    for key, value in values.items():
        await store.set(key, proto.buffer.from_bytes(value))
    store.close()

    reader = ZarrdbStore(path, read_only=True, cache_size=cache_size)
    for key, value in values.items():
        got = await reader.get(key, proto)
        assert got is not None and got.to_bytes() == value, key
    big = values["k/4"]
    part = await reader.get("k/4", proto, zarr.abc.store.RangeByteRequest(500_000, 1_600_000))
    assert part is not None and part.to_bytes() == big[500_000:1_600_000]
    reader.close()


def test_an_array_larger_than_the_cache_round_trips(tmp_path: Path) -> None:
    data = np.arange(512 * 1024, dtype="float64").reshape(512, 1024)  # 4 MiB, chunks of 1 MiB
    store = ZarrdbStore(tmp_path / "a.zarrdb", cache_size=1 << 18)
    arr = zarr.create_array(store, name="a", shape=data.shape, chunks=(128, 1024), dtype="float64")
    arr[:] = data
    store.close()
    again = zarr.open_array(ZarrdbStore(tmp_path / "a.zarrdb", read_only=True, cache_size=0), path="a")
    np.testing.assert_array_equal(again[:], data)


@pytest.mark.parametrize("bad", [-1, 1.5, "64MiB", True])
def test_a_cache_size_that_is_not_a_byte_count_is_refused(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValueError, match="cache_size"):
        ZarrdbStore(tmp_path / "x.zarrdb", cache_size=bad)  # type: ignore[arg-type]
    assert not (tmp_path / "x.zarrdb").exists()


def test_pickling_and_with_read_only_keep_the_cache_size(tmp_path: Path) -> None:
    store = ZarrdbStore(tmp_path / "p.zarrdb", cache_size=12345)
    again = pickle.loads(pickle.dumps(store))
    assert again._cache_size == 12345
    assert store.with_read_only(True)._cache_size == 12345
