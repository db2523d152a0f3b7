"""xarray writes a dataset through ZarrdbStore and reads it back identical from a read-only store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from zarrdb import ZarrdbStore


def _dataset() -> xr.Dataset:
    rng = np.random.default_rng(15)
    time = pd.date_range("2026-01-01", periods=6, freq="D")
    return xr.Dataset(
        {
            "temperature": (("time", "station"), rng.normal(15, 5, (6, 4)).astype("float32")),
            "count": (("time", "station"), rng.integers(0, 100, (6, 4)).astype("int64")),
            "name": ("station", np.array(["Oslo", "Lyon", "Graz", "Évora"], dtype=object)),
        },
        coords={"time": time, "station": [10, 20, 30, 40]},
        attrs={"title": "zarrdb round trip"},
    )


# zarr-python warns that consolidated metadata is not in the v3 spec; that is its concern, not ours.
@pytest.mark.filterwarnings("ignore:Consolidated metadata:UserWarning")
@pytest.mark.parametrize("consolidated", [True, False])
def test_xarray_round_trip(tmp_path: Path, consolidated: bool) -> None:
    ds = _dataset()
    path = tmp_path / "ds.zarrdb"
    ds.to_zarr(ZarrdbStore(path), consolidated=consolidated, zarr_format=3)
    back = xr.open_zarr(ZarrdbStore(path, read_only=True), chunks=None, consolidated=consolidated)
    xr.testing.assert_identical(back.load(), ds)


def test_xarray_append_along_time(tmp_path: Path) -> None:
    ds = _dataset()
    path = tmp_path / "append.zarrdb"
    ds.isel(time=slice(0, 3)).to_zarr(ZarrdbStore(path), consolidated=False, zarr_format=3)
    ds.isel(time=slice(3, None)).to_zarr(ZarrdbStore(path), append_dim="time", consolidated=False)
    back = xr.open_zarr(ZarrdbStore(path, read_only=True), chunks=None, consolidated=False)
    xr.testing.assert_identical(back.load(), ds)


@pytest.mark.filterwarnings("ignore:Consolidated metadata:UserWarning")
def test_xarray_through_the_codec_pipeline(tmp_path: Path) -> None:
    """The same round trip and append with ``zarrdb.CodecPipeline``: numbers go through the
    engine, datetimes and strings through zarr-python's pipeline, and all come back identical."""
    import zarr

    ds = _dataset()
    path = tmp_path / "pipeline.zarrdb"
    with zarr.config.set({"codec_pipeline.path": "zarrdb.CodecPipeline"}):
        ds.isel(time=slice(0, 3)).to_zarr(ZarrdbStore(path), consolidated=True, zarr_format=3)
        ds.isel(time=slice(3, None)).to_zarr(ZarrdbStore(path), append_dim="time", consolidated=True)
        back = xr.open_zarr(ZarrdbStore(path, read_only=True), chunks=None, consolidated=True)
        xr.testing.assert_identical(back.load(), ds)
    plain = xr.open_zarr(ZarrdbStore(path, read_only=True), chunks=None, consolidated=True)
    xr.testing.assert_identical(plain.load(), ds)
