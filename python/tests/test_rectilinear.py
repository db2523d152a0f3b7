"""Rectilinear chunk grids (zarr-python 3.4's experimental ``array.rectilinear_chunks``) written
through a ``ZarrdbStore``: the document is accepted as the engine parses it, every write (through
``zarrdb.CodecPipeline``, which hands such arrays to zarr-python's pipeline inside one
transaction, and through zarr-python's own) reads back equal, and resizing grows the grid as
zarr-python does (docs/python.md, "Rectilinear chunk grids")."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrdb
from zarrdb import _native

if "rectilinear_chunks" not in zarr.config.to_dict().get("array", {}):
    pytest.skip(f"zarr-python {zarr.__version__} has no rectilinear chunk grids (3.2+)", allow_module_level=True)

RECTILINEAR = {"array.rectilinear_chunks": True}


def _document(store: zarrdb.ZarrdbStore, key: str) -> dict:
    value = _native.Database.open(store.path, True).store().get(key)
    assert value is not None, key
    return json.loads(bytes(value))


@pytest.mark.parametrize("pipeline", ["zarrdb.CodecPipeline", "zarr.core.codec_pipeline.BatchedCodecPipeline"])
def test_rectilinear_arrays_round_trip_through_the_store(tmp_path: Path, pipeline: str) -> None:
    path = tmp_path / "d.zarrdb"
    model = np.arange(60, dtype="int32").reshape(10, 6)
    with zarr.config.set({**RECTILINEAR, "codec_pipeline.path": pipeline}):
        store = zarrdb.ZarrdbStore(path)
        a = zarr.create_array(store, name="a", shape=(10, 6), chunks=[[2, 2, 2, 3, 1], [4, 2]], dtype="int32")
        a[:] = model
        a[3:8, 1:5] = -model[3:8, 1:5]  # partial chunks on every side
        model[3:8, 1:5] = -model[3:8, 1:5]
        a[::3, 5] = 99  # a stepped selection
        model[::3, 5] = 99
        a.resize((13, 6))
        model = np.concatenate([model, np.zeros((3, 6), dtype="int32")])
        a[11:, :] = 7
        model[11:, :] = 7
        grid = _document(store, "a/zarr.json")["chunk_grid"]
        assert grid == {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[[2, 3], 3, 1, 3], [4, 2]]}}
        again = zarr.open_array(zarrdb.ZarrdbStore(path), path="a", mode="r")
        np.testing.assert_array_equal(again[:], model)
        np.testing.assert_array_equal(again[4:12, 3:6], model[4:12, 3:6])


def test_the_engine_reads_what_zarr_python_wrote(tmp_path: Path) -> None:
    path = tmp_path / "d.zarrdb"
    model = np.linspace(-1.0, 1.0, 21)
    with zarr.config.set(RECTILINEAR):
        a = zarr.create_array(zarrdb.ZarrdbStore(path), name="x", shape=(21,), chunks=[[5, 1, 15]], dtype="float64",
                              fill_value=3.0)
        a[2:20] = model[2:20]
    model[:2], model[20:] = 3.0, 3.0
    array = _native.Database.open(path, True).store().open_array("/x")
    got = np.frombuffer(bytes(array.read_region([0], [21])), dtype="<f8")
    np.testing.assert_array_equal(got, model)


SELECTIONS = {
    "box": lambda a, m: (a.__setitem__((slice(3, 8), slice(1, 5)), -1), m.__setitem__((slice(3, 8), slice(1, 5)), -1)),
    "stepped": lambda a, m: (a.__setitem__((slice(None, None, 3), 5), 99), m.__setitem__((slice(None, None, 3), 5), 99)),
    "orthogonal": lambda a, m: (a.oindex.__setitem__(([1, 7], [0, 5]), -2), m.__setitem__(np.ix_([1, 7], [0, 5]), -2)),
    "coordinate": lambda a, m: (a.vindex.__setitem__(([0, 9], [1, 2]), -3), m.__setitem__(([0, 9], [1, 2]), -3)),
    "block": lambda a, m: (a.blocks.__setitem__((1, 0), np.full((2, 4), 5, "int32")), m.__setitem__((slice(2, 4), slice(0, 4)), 5)),
}


@pytest.mark.parametrize("kind", sorted(SELECTIONS))
def test_every_selection_of_a_rectilinear_array_is_written_by_the_engine(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # zarr-python's own pipeline inside a transaction is the fallback; here it must not run.
    async def refused(*_: object) -> None:
        raise AssertionError("the write fell back to zarr-python's pipeline")

    monkeypatch.setattr(zarrdb.CodecPipeline, "_write_in_transaction", refused)
    model = np.arange(60, dtype="int32").reshape(10, 6)
    with zarr.config.set({**RECTILINEAR, "codec_pipeline.path": "zarrdb.CodecPipeline"}):
        a = zarr.create_array(zarrdb.ZarrdbStore(tmp_path / "d.zarrdb"), name="a", shape=(10, 6),
                              chunks=[[2, 2, 2, 3, 1], [4, 2]], dtype="int32")
        a[:] = model
        SELECTIONS[kind](a, model)
        np.testing.assert_array_equal(a[:], model)
        np.testing.assert_array_equal(a[1:9:2, 1:], model[1:9:2, 1:])


@pytest.mark.parametrize("kind", ["stepped", "orthogonal", "coordinate"])
def test_threads_writing_interleaved_elements_of_rectilinear_chunks_lose_nothing(tmp_path: Path, kind: str) -> None:
    # Writer w owns the columns c with c % 4 == w: every chunk (edges of 3 to 8) holds
    # elements of every writer, so each assignment read-modify-writes chunks all writers change.
    writers, rounds, shape = 4, 8, (12, 16)
    with zarr.config.set({**RECTILINEAR, "codec_pipeline.path": "zarrdb.CodecPipeline"}):
        store = zarrdb.ZarrdbStore(tmp_path / "d.zarrdb")
        a = zarr.create_array(store, name="a", shape=shape, chunks=[[5, 3, 4], [6, 3, 7]], dtype="int32", fill_value=0)
        lost: list[str] = []

        def write(w: int) -> None:
            columns = np.arange(w, shape[1], writers)
            for r in range(rounds):
                v = w * 100 + r + 1
                if kind == "stepped":
                    a[:, w::writers] = v
                elif kind == "orthogonal":
                    a.oindex[np.arange(shape[0]), columns] = v
                else:
                    rows, cols = np.meshgrid(np.arange(shape[0]), columns, indexing="ij")
                    a.vindex[rows.ravel(), cols.ravel()] = np.full(rows.size, v, dtype="int32")
                seen = np.asarray(a[:, w::writers])
                if np.count_nonzero(seen != v):
                    lost.append(f"writer {w} round {r}: {np.count_nonzero(seen != v)} elements lost")

        pool = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        assert lost == []
        final = np.asarray(zarr.open_array(store, path="a", mode="r")[:])
        for w in range(writers):
            assert (final[:, w::writers] == w * 100 + rounds).all(), w
