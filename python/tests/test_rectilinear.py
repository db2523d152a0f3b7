"""Rectilinear chunk grids (zarr-python 3.4's experimental ``array.rectilinear_chunks``) written
through a ``ZarrdbStore``: the document is accepted as the engine parses it, every write (through
``zarrdb.CodecPipeline``, which hands such arrays to zarr-python's pipeline inside one
transaction, and through zarr-python's own) reads back equal, and resizing grows the grid as
zarr-python does (docs/python.md, "Rectilinear chunk grids")."""

from __future__ import annotations

import json
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
