"""``zarrdb.CodecPipeline``: box selections on a ``ZarrdbStore`` are read and written by the
engine in one call, other assignments by the engine's scattered write, and what the engine
cannot write by zarr-python's own pipeline inside a transaction. Each test mirrors its
operations into a numpy model and compares the whole array after every step."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from zarr.core.codec_pipeline import BatchedCodecPipeline

import zarrdb

PIPELINE = {"codec_pipeline.path": "zarrdb.CodecPipeline"}


@pytest.fixture
def fallbacks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Records every call that reached zarr-python's own pipeline (including the one inside a
    sharding codec)."""
    calls: list[str] = []
    write, read = BatchedCodecPipeline.write, BatchedCodecPipeline.read

    async def counted_write(self: Any, *args: Any, **kwargs: Any) -> None:
        calls.append("write")
        await write(self, *args, **kwargs)

    async def counted_read(self: Any, *args: Any, **kwargs: Any) -> None:
        calls.append("read")
        await read(self, *args, **kwargs)

    monkeypatch.setattr(BatchedCodecPipeline, "write", counted_write)
    monkeypatch.setattr(BatchedCodecPipeline, "read", counted_read)
    yield calls


def test_it_is_the_default_for_zarrdb_stores_only(tmp_path: Path) -> None:
    """Importing zarrdb makes it zarr's default pipeline; arrays on other stores still get
    zarr-python's own pipeline, not a wrapper; a pipeline the configuration names wins."""
    assert zarr.config.get("codec_pipeline.path") == "zarrdb.CodecPipeline"
    store = zarrdb.ZarrdbStore(tmp_path / "d.zarrdb")
    array = zarr.create_array(store, name="a", shape=(4,), dtype="int8")
    assert isinstance(array._async_array.codec_pipeline, zarrdb.CodecPipeline)
    local = zarr.create_array(zarr.storage.LocalStore(tmp_path / "local"), shape=(4,), dtype="int8")
    assert type(local._async_array.codec_pipeline) is BatchedCodecPipeline
    with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}):
        named = zarr.open_array(store, path="a")
    assert type(named._async_array.codec_pipeline) is BatchedCodecPipeline


def test_zarr_python_uses_it_when_configured(tmp_path: Path) -> None:
    with zarr.config.set(PIPELINE):
        array = zarr.create_array(zarrdb.ZarrdbStore(tmp_path / "d.zarrdb"), name="a", shape=(4,), dtype="int8")
    assert isinstance(array._async_array.codec_pipeline, zarrdb.CodecPipeline)


@pytest.mark.parametrize("dtype", ["int16", "float32", "uint64", "bool", "complex64"])
@pytest.mark.parametrize("shards", [None, (32, 64)])
def test_box_selections_go_to_the_engine(
    tmp_path: Path, fallbacks: list[str], dtype: str, shards: tuple[int, int] | None
) -> None:
    rng = np.random.default_rng(7)
    with zarr.config.set(PIPELINE):
        store = zarrdb.ZarrdbStore(tmp_path / "d.zarrdb")
        array = zarr.create_array(
            store, name="g/a", shape=(70, 90), chunks=(16, 32), shards=shards, dtype=dtype, fill_value=1
        )
        model = np.ones((70, 90), dtype=dtype)
        for _ in range(12):
            start = rng.integers(0, [70, 90])
            stop = start + rng.integers(1, [71, 91] - start)
            box = (slice(start[0], stop[0]), slice(start[1], stop[1]))
            values = (rng.random(stop - start) * 50).astype(dtype)
            array[box] = values
            model[box] = values
            np.testing.assert_array_equal(array[:], model)
            np.testing.assert_array_equal(array[box], model[box])
        array[3:40, 10:20] = 0  # a scalar over a box
        model[3:40, 10:20] = 0
        np.testing.assert_array_equal(array[:], model)
    assert fallbacks == []
    # What zarr-python's own pipeline reads back is the same.
    np.testing.assert_array_equal(zarr.open_array(zarrdb.ZarrdbStore(tmp_path / "d.zarrdb"), path="g/a")[:], model)


@pytest.mark.parametrize("dtype", ["int32", "float64", "bool", "uint8"])
def test_every_other_selection_goes_to_the_engine(tmp_path: Path, fallbacks: list[str], dtype: str) -> None:
    """Steps, integer indices, orthogonal and coordinate selections, masks and blocks are written
    by the engine (``write_scattered``) and set exactly the elements numpy's indexing sets."""
    rng = np.random.default_rng(11)
    with zarr.config.set(PIPELINE):
        array = zarr.create_array(
            zarrdb.ZarrdbStore(tmp_path / "d.zarrdb"),
            name="a",
            shape=(40, 30),
            chunks=(8, 8),
            dtype=dtype,
            fill_value=0,
        )
        model = np.zeros((40, 30), dtype=dtype)

        def values(shape: tuple[int, ...]) -> np.ndarray:
            return (rng.random(shape) * 100).astype(dtype)

        array[:] = model + 5
        model[:] = 5
        steps = values((14, 1))
        array[::3, 1:2] = steps  # steps
        model[::3, 1:2] = steps
        array[4, :] = 9  # an integer index drops an axis
        model[4, :] = 9
        array[2:38:5, 29] = 0  # a step, dropping an axis
        model[2:38:5, 29] = 0
        rows, columns = np.array([1, 2, 30, 2]), np.array([0, 5, 29, 5])  # a repeated coordinate
        coords = values((4,))
        array.vindex[rows, columns] = coords
        model[rows, columns] = coords
        mask = rng.random((40, 30)) < 0.2
        masked = values((int(mask.sum()),))
        array.vindex[mask] = masked  # a mask
        model[mask] = masked
        picked_rows, picked_columns = np.array([0, 9, 17, 39]), np.array([3, 4, 28])
        outer = values((4, 3))
        array.oindex[picked_rows, picked_columns] = outer
        model[np.ix_(picked_rows, picked_columns)] = outer
        row_mask = rng.random(40) < 0.5
        array.oindex[row_mask, 7] = 1  # a mask and an integer: a scalar over the selection
        model[row_mask, 7] = 1
        block = values((8, 16))
        array.blocks[2, 1:3] = block  # whole chunks
        model[16:24, 8:24] = block
        edge = values((8, 6))
        array.blocks[4, 3] = edge  # the edge chunk: 6 of its 8 columns inside the array
        model[32:40, 24:30] = edge
        np.testing.assert_array_equal(array[:], model)
        np.testing.assert_array_equal(array[::2, 3], model[::2, 3])
    assert "write" not in fallbacks and "read" in fallbacks
    # What zarr-python's own pipeline reads back is the same.
    np.testing.assert_array_equal(zarr.open_array(zarrdb.ZarrdbStore(tmp_path / "d.zarrdb"), path="a")[:], model)


def test_other_stores_strings_and_v2_use_zarr_pythons_pipeline(tmp_path: Path, fallbacks: list[str]) -> None:
    with zarr.config.set(PIPELINE):
        memory = zarr.create_array(zarr.storage.MemoryStore(), shape=(10,), chunks=(4,), dtype="float64")
        # Exactly zarr-python's own pipeline, not a wrapper around it.
        assert type(memory._async_array.codec_pipeline) is BatchedCodecPipeline
        memory[:] = np.arange(10.0)
        np.testing.assert_array_equal(memory[:], np.arange(10.0))
        store = zarrdb.ZarrdbStore(tmp_path / "d.zarrdb")
        text = zarr.create_array(store, name="s", shape=(3,), chunks=(2,), dtype=str)
        text[:] = np.array(["a", "bb", "ccc"])
        assert list(text[:]) == ["a", "bb", "ccc"]
        v2 = zarr.create_array(store, name="v2", shape=(6,), chunks=(4,), dtype="int8", zarr_format=2)
        v2[:] = np.arange(6, dtype="int8")
        np.testing.assert_array_equal(v2[:], np.arange(6, dtype="int8"))
    assert fallbacks.count("write") == 3


def test_empty_chunks_are_kept_when_the_array_asks(tmp_path: Path, fallbacks: list[str]) -> None:
    with zarr.config.set(PIPELINE):
        store = zarrdb.ZarrdbStore(tmp_path / "d.zarrdb")
        dense = zarr.create_array(
            store, name="dense", shape=(8,), chunks=(4,), dtype="int8", config={"write_empty_chunks": True}
        )
        dense[:] = 0
        sparse = zarr.create_array(store, name="sparse", shape=(8,), chunks=(4,), dtype="int8")
        sparse[:] = 0
    assert fallbacks == ["write"]
    keys = store._handle().list_prefix("")
    assert [k for k in keys if "/c/" in k] == ["dense/c/0", "dense/c/1"]


def test_an_assignment_in_a_transaction_commits_with_it(tmp_path: Path) -> None:
    store = zarrdb.ZarrdbStore(tmp_path / "d.zarrdb")
    with zarr.config.set(PIPELINE):
        zarr.create_array(store, name="a", shape=(64,), chunks=(8,), dtype="int64", fill_value=0)
        with pytest.raises(RuntimeError):
            with store.transaction() as tx:
                zarr.open_array(tx, path="a")[:] = np.arange(64)
                raise RuntimeError("abandon")
        np.testing.assert_array_equal(zarr.open_array(store, path="a")[:], np.zeros(64))
        with store.transaction() as tx:
            zarr.open_array(tx, path="a")[8:40] = np.arange(32)
        expected = np.zeros(64)
        expected[8:40] = np.arange(32)
        np.testing.assert_array_equal(zarr.open_array(store, path="a")[:], expected)


def test_threads_writing_boxes_of_shared_chunks_lose_nothing(tmp_path: Path, fallbacks: list[str]) -> None:
    """8 threads each own columns 3w..3w+2 of every 24-column band; every box a thread writes
    covers parts of chunks other threads write too. A lost update leaves a wrong value."""
    threads, rounds = 8, 25
    with zarr.config.set(PIPELINE):
        store = zarrdb.ZarrdbStore(tmp_path / "d.zarrdb")
        array = zarr.create_array(store, name="a", shape=(32, 96), chunks=(16, 16), dtype="int32", fill_value=-1)

        def writer(w: int) -> None:
            for r in range(rounds):
                band = (r % 4) * 24
                columns = slice(band + 3 * w, band + 3 * w + 3)
                array[:, columns] = np.full((32, 3), w * 1000 + r, dtype="int32")

        pool = [threading.Thread(target=writer, args=(w,)) for w in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        result = zarr.open_array(store, path="a")[:]
    assert fallbacks == []
    for w in range(threads):
        for band in range(4):
            last = max(r for r in range(rounds) if r % 4 == band)
            assert (result[:, band * 24 + 3 * w : band * 24 + 3 * w + 3] == w * 1000 + last).all(), (w, band)


def test_read_only_stores_refuse_as_zarr_python_does(tmp_path: Path) -> None:
    store = zarrdb.ZarrdbStore(tmp_path / "d.zarrdb")
    with zarr.config.set(PIPELINE):
        zarr.create_array(store, name="a", shape=(4,), chunks=(2,), dtype="int8", fill_value=0)
        for read_only in (zarr.open_array(store, path="a", mode="r"), zarr.open_array(store.with_read_only(True), path="a")):
            with pytest.raises(ValueError):
                read_only[:] = 7
    np.testing.assert_array_equal(zarr.open_array(store, path="a")[:], np.zeros(4))


@pytest.mark.filterwarnings("ignore:Numcodecs codecs:UserWarning")
def test_codecs_zarrdb_cannot_run_stay_with_zarr_python(tmp_path: Path, fallbacks: list[str]) -> None:
    """numcodecs' own zstd is recognised by the engine but not run: such arrays fall back, also
    inside a transaction, where a half-done engine write would have committed with it."""
    store = zarrdb.ZarrdbStore(tmp_path / "d.zarrdb")
    zstd = zarr.registry.get_codec_class("numcodecs.zstd")()
    with zarr.config.set(PIPELINE):
        array = zarr.create_array(store, name="a", shape=(4,), chunks=(2,), dtype="int16", fill_value=0, compressors=[zstd])
        array[:] = np.array([1, 2, 3, 4], dtype="int16")
        with store.transaction() as tx:
            zarr.open_array(tx, path="a")[0:4] = np.array([0, 0, 5, 5], dtype="int16")
        np.testing.assert_array_equal(zarr.open_array(store, path="a")[:], [0, 0, 5, 5])
    assert fallbacks.count("write") == 2 and "read" in fallbacks


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_what_the_engine_cannot_write_runs_in_a_transaction(
    tmp_path: Path, fallbacks: list[str], zarr_format: int
) -> None:
    """A Zarr v2 array and a string array (zarr-python's pipeline writes them): 4 threads assign
    interleaved columns of shared chunks with steps; each assignment runs in a transaction of
    its own, so none is lost."""
    threads, rounds = 4, 8
    with zarr.config.set(PIPELINE):
        store = zarrdb.ZarrdbStore(tmp_path / "d.zarrdb")
        numbers = zarr.create_array(
            store, name="n", shape=(8, 16), chunks=(8, 8), dtype="int32", fill_value=0, zarr_format=zarr_format
        )
        text = zarr.create_array(store, name="s", shape=(8, 16), chunks=(8, 8), dtype=str, zarr_format=zarr_format)

        def writer(w: int) -> None:
            for r in range(rounds):
                numbers[:, w::threads] = w * 100 + r
                text[:, w::threads] = f"{w}-{r}"

        pool = [threading.Thread(target=writer, args=(w,)) for w in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        got_numbers, got_text = numbers[:], text[:]
    for w in range(threads):
        assert (got_numbers[:, w::threads] == w * 100 + rounds - 1).all(), w
        assert (got_text[:, w::threads] == f"{w}-{rounds - 1}").all(), w
    assert fallbacks.count("write") == (2 if zarr_format == 2 else 1) * threads * rounds
