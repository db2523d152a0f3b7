"""Opening a database by path the way users do: a dataset another process wrote is read by
xarray from the ``.zarrdb`` path (``engine="zarrdb"``, chosen by itself for the suffix and for
``str(store)``), by ``xr.open_zarr`` over a ``ZarrdbStore``, and ``str(store)`` opens it again."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr

from zarrdb import ZarrdbStore

pytestmark = pytest.mark.filterwarnings("ignore:Consolidated metadata:UserWarning")


def _written_by_another_process(path: Path) -> xr.Dataset:
    expected = xr.Dataset(
        {"t": (("time", "x"), np.arange(12, dtype="float32").reshape(4, 3))},
        coords={"time": np.arange(4), "x": [10, 20, 30]},
        attrs={"title": "from a child"},
    )
    code = textwrap.dedent(f"""
        import numpy as np
        import xarray as xr
        import zarrdb
        ds = xr.Dataset(
            {{"t": (("time", "x"), np.arange(12, dtype="float32").reshape(4, 3))}},
            coords={{"time": np.arange(4), "x": [10, 20, 30]}},
            attrs={{"title": "from a child"}},
        )
        ds.to_zarr(zarrdb.ZarrdbStore({str(path)!r}), zarr_format=3)
        """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return expected


def test_open_dataset_with_engine_zarrdb(tmp_path: Path) -> None:
    path = tmp_path / "x.zarrdb"
    expected = _written_by_another_process(path)
    with xr.open_dataset(path, engine="zarrdb") as ds:
        xr.testing.assert_identical(ds.load(), expected)


def test_open_dataset_picks_zarrdb_for_the_suffix(tmp_path: Path) -> None:
    path = tmp_path / "x.zarrdb"
    expected = _written_by_another_process(path)
    with xr.open_dataset(str(path)) as ds:
        xr.testing.assert_identical(ds.load(), expected)


def test_open_zarr_over_a_store(tmp_path: Path) -> None:
    path = tmp_path / "x.zarrdb"
    expected = _written_by_another_process(path)
    with xr.open_zarr(ZarrdbStore(path, read_only=True)) as ds:
        xr.testing.assert_identical(ds.load(), expected)


def test_str_of_a_store_opens_again(tmp_path: Path) -> None:
    path = tmp_path / "x.zarrdb"
    expected = _written_by_another_process(path)
    store = ZarrdbStore(path)
    again = ZarrdbStore(str(store))
    assert again.path == store.path
    assert zarr.open_group(again, mode="r").attrs["title"] == "from a child"
    with xr.open_dataset(str(store)) as ds:  # "zarrdb://PATH": the engine picks it
        xr.testing.assert_identical(ds.load(), expected)


def test_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no zarrdb database"):
        xr.open_dataset(tmp_path / "absent.zarrdb", engine="zarrdb")
