"""A dataset with CF encoding (packed int16 with scale_factor/add_offset and _FillValue, a time
coordinate in "days since 2000-01-01" on the proleptic_gregorian calendar with a bounds variable,
NaNs, a string coordinate, chunk encodings) goes through ZarrdbStore unchanged: read back it is
identical to the original, and the stored arrays (dtypes, attributes, fill values, chunking,
encoded values) equal those xarray writes to zarr-python's LocalStore."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr
import zarr
from zarr.core.buffer import default_buffer_prototype
from zarr.core.sync import sync
from zarr.storage import LocalStore

from zarrdb import ZarrdbStore


def _cf_dataset() -> tuple[xr.Dataset, dict[str, dict[str, object]]]:
    rng = np.random.default_rng(15)
    days, stations = 12, 5
    time = pd.date_range("2001-03-01", periods=days, freq="D").values.astype("datetime64[ns]")
    bounds = np.stack([time, time + np.timedelta64(1, "D")], axis=1)
    # Multiples of the packing step, so packing into int16 loses nothing and the round trip is
    # exact; NaNs become the packed _FillValue.
    temperature = (250 + 0.25 * rng.integers(0, 400, (days, stations))).astype("float32")
    temperature[2, 1] = temperature[7, 4] = np.nan
    precipitation = rng.gamma(1.0, 2.0, (days, stations)).astype("float32")
    precipitation[rng.random((days, stations)) < 0.2] = np.nan
    ds = xr.Dataset(
        {
            "temperature": (
                ("time", "station"),
                temperature,
                {"standard_name": "air_temperature", "units": "K", "long_name": "Air temperature"},
            ),
            "precipitation": (
                ("time", "station"),
                precipitation,
                {"standard_name": "precipitation_amount", "units": "kg m-2"},
            ),
            "time_bnds": (("time", "nv"), bounds),
        },
        coords={
            "time": ("time", time, {"standard_name": "time", "bounds": "time_bnds"}),
            "station": ("station", np.array(["Bergen", "Tromsø", "Kiruna", "Oulu", "Umeå"], "O")),
            "elevation": ("station", np.array([12.0, 100.5, 530.0, 15.0, np.nan]), {"units": "m"}),
        },
        attrs={"Conventions": "CF-1.11", "title": "zarrdb CF round trip"},
    )
    time_encoding = {
        "units": "days since 2000-01-01",
        "calendar": "proleptic_gregorian",
        "dtype": "int32",
    }
    encoding: dict[str, dict[str, object]] = {
        "temperature": {
            "dtype": "int16",
            "scale_factor": np.float32(0.25),
            "add_offset": np.float32(250.0),
            "_FillValue": np.int16(-32768),
            "chunks": (4, 5),
        },
        "precipitation": {"dtype": "float32", "_FillValue": np.float32(-999.0), "chunks": (6, 2)},
        "time": time_encoding,
        "time_bnds": time_encoding,
    }
    return ds, encoding


def _arrays(store: zarr.abc.store.Store) -> dict[str, tuple[dict[str, object], np.ndarray]]:
    """Every stored array without CF decoding: its metadata document (zarr.json, which holds the
    data type, shape, chunking, codecs, fill value and attributes) and its encoded values."""
    group = zarr.open_group(store, mode="r")
    prototype = default_buffer_prototype()
    arrays = {}
    for name, array in group.arrays():
        document = sync(store.get(f"{name}/zarr.json", prototype))
        assert document is not None, name
        arrays[name] = (json.loads(document.to_bytes()), array[...])
    return arrays


def test_cf_encoded_dataset_round_trip(tmp_path: Path) -> None:
    ds, encoding = _cf_dataset()
    local = LocalStore(tmp_path / "local.zarr")
    ds.to_zarr(local, encoding=encoding, consolidated=False, zarr_format=3)
    path = tmp_path / "cf.zarrdb"
    ds.to_zarr(ZarrdbStore(path), encoding=encoding, consolidated=False, zarr_format=3)

    store = ZarrdbStore(path, read_only=True)
    back = xr.open_zarr(store, chunks=None, consolidated=False).load()
    xr.testing.assert_identical(back, ds)
    assert back["temperature"].encoding["dtype"] == np.dtype("int16")
    assert back["time"].encoding["units"] == "days since 2000-01-01"
    assert back["time"].encoding["calendar"] == "proleptic_gregorian"

    expected, stored = _arrays(local), _arrays(store)
    assert sorted(stored) == sorted(expected)
    for name, (document, values) in expected.items():
        assert stored[name][0] == document, name
        np.testing.assert_array_equal(stored[name][1], values, err_msg=name, strict=True)
    # The packing really happened: int16 values and the attributes that decode them.
    temperature = stored["temperature"][0]
    assert temperature["data_type"] == "int16"
    assert temperature["attributes"]["scale_factor"] == 0.25
    assert temperature["attributes"]["_FillValue"] == -32768
