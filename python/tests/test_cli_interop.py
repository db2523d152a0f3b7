"""Files cross between Python and the Rust side: what zarr-python writes through ZarrdbStore opens
in `zarrdb tree/check/cat`, and what `zarrdb import` writes opens in Python.

The CLI binary is found by zarrdb_cli.py."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr
from zarrdb_cli import run_cli

from zarrdb import ZarrdbStore


def test_python_written_file_opens_in_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "py.zarrdb"
    store = ZarrdbStore(path)
    root = zarr.open_group(store, mode="w", attributes={"source": "python"})
    a = root.create_array("grid/a", shape=(5, 3), chunks=(2, 2), dtype="int32", fill_value=-1)
    a[1:4, :] = np.arange(9, dtype="int32").reshape(3, 3)
    root.create_array("names", shape=(2,), dtype=str)[:] = ["α", "beta"]
    store.close()  # the CLI is another process: the file must not be held open

    assert "grid" in run_cli("tree", str(path))
    run_cli("check", str(path))
    values = json.loads(run_cli("cat", str(path), "/grid/a", "--json"))
    assert values == [[-1, -1, -1], [0, 1, 2], [3, 4, 5], [6, 7, 8], [-1, -1, -1]]
    assert json.loads(run_cli("cat", str(path), "/names", "--json")) == ["α", "beta"]


def test_cli_imported_file_opens_in_python(tmp_path: Path) -> None:
    folder = tmp_path / "folder.zarr"
    group = zarr.open_group(zarr.storage.LocalStore(folder), mode="w")
    group.create_array("x", shape=(6,), chunks=(4,), dtype="float64")[:] = np.linspace(0, 1, 6)
    path = tmp_path / "imported.zarrdb"
    run_cli("import", str(folder), str(path))

    back = zarr.open_group(ZarrdbStore(path, read_only=True), mode="r")
    np.testing.assert_array_equal(back["x"][:], np.linspace(0, 1, 6))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_imported_consolidated_dataset_opens_consolidated(tmp_path: Path, zarr_format: int) -> None:
    folder = tmp_path / "ds.zarr"
    ds = xr.Dataset({"v": (("t", "x"), np.arange(12.0).reshape(4, 3))}, coords={"t": np.arange(4)})
    ds.to_zarr(folder, consolidated=True, zarr_format=zarr_format)
    path = tmp_path / "ds.zarrdb"
    run_cli("import", str(folder), str(path))
    # The import keeps only the request; the Python store serves the metadata afresh, so xarray
    # reads it consolidated, without its fallback warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        opened = xr.open_zarr(ZarrdbStore(path, read_only=True))
        xr.testing.assert_identical(opened.load(), ds)
