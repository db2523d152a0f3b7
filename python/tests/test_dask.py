"""xarray reads lazily through ZarrdbStore (``open_zarr(..., chunks={})``, one dask task per
stored chunk) and dask computes the result correctly with its threaded and process schedulers.

The process scheduler pickles the store into worker processes, which reopen the file by path. On
redb that needs the multi-process mode, the default (the workers and this process all have the
file open at once); with ``multi_process=False`` a worker is refused with ``zarrdb.LockedError``,
which reaches the caller."""

from __future__ import annotations

from pathlib import Path

import dask.array
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import zarrdb
from zarrdb import ZarrdbStore


def _dataset() -> xr.Dataset:
    rng = np.random.default_rng(15)
    time = pd.date_range("2026-01-01", periods=8, freq="6h").values.astype("datetime64[ns]")
    return xr.Dataset(
        {
            "temperature": (("time", "y", "x"), rng.normal(280, 8, (8, 6, 10)).astype("float32")),
            "flag": (("time", "y", "x"), rng.integers(0, 4, (8, 6, 10)).astype("uint8")),
        },
        coords={"time": time, "y": np.arange(6.0), "x": np.arange(10.0)},
        attrs={"title": "zarrdb with dask"},
    )


def _lazy(path: Path, multi_process: bool | None) -> xr.Dataset:
    ds = _dataset()
    encoding = {name: {"chunks": (2, 3, 5)} for name in ds.data_vars}
    writer = ZarrdbStore(path, multi_process=multi_process)
    ds.to_zarr(writer, encoding=encoding, consolidated=False, zarr_format=3)
    reader = ZarrdbStore(path, read_only=True, multi_process=multi_process)
    lazy = xr.open_zarr(reader, chunks={}, consolidated=False)
    # One dask task per stored chunk, so the schedulers really spread the reads.
    assert isinstance(lazy["temperature"].data, dask.array.Array)
    assert lazy["temperature"].data.numblocks == (4, 2, 2)
    return lazy


@pytest.mark.parametrize(
    "scheduler, multi_process",
    [("threads", False), ("threads", None), ("processes", None), ("processes", True)],
)
def test_dask_schedulers_read_correctly(
    tmp_path: Path, scheduler: str, multi_process: bool | None
) -> None:
    lazy = _lazy(tmp_path / "dask.zarrdb", multi_process)
    xr.testing.assert_identical(lazy.compute(scheduler=scheduler), _dataset())


def test_process_scheduler_without_multi_process_is_refused(tmp_path: Path) -> None:
    lazy = _lazy(tmp_path / "locked.zarrdb", multi_process=False)
    with pytest.raises(zarrdb.LockedError):
        lazy.compute(scheduler="processes")
