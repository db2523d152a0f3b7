#!/usr/bin/env python3
"""Realistic xarray datasets for tests/xarray_roundtrip.rs.

Usage:
  xarray_datasets.py write OUTDIR     write every dataset (see DATASETS) as Zarr v2 and v3,
                                      consolidated and not, to OUTDIR/<name>.zarr; print the
                                      names, one a line
  xarray_datasets.py check SOURCE EXPORT
                                      open EXPORT (a folder, or a .zip) with consolidated=True
                                      and with consolidated=False, and require each to be
                                      xarray.testing.assert_identical to SOURCE as xarray reads it;
                                      exit 1 naming every difference

The datasets are what Zarr's users keep: a climate-style grid (CF-encoded times, float32 with
NaN, int16 packed with scale_factor/add_offset and a _FillValue, a string coordinate, global and
variable attributes, chunks that do not divide the shape) and a station table (variable-length
non-ASCII and empty strings, fixed-width byte strings, datetimes with NaT, timedeltas, booleans).
"""
import sys
import warnings

import numpy as np
import pandas as pd
import xarray as xr
import zarr

warnings.simplefilter("ignore")


def climate():
    rng = np.random.default_rng(7)
    time = pd.date_range("2001-01-01", periods=10, freq="6h")
    lat = np.linspace(-60.0, 60.0, 5)
    lon = np.arange(0.0, 360.0, 60.0)
    t2m = (rng.standard_normal((10, 5, 6)) * 10 + 280).astype("float32")
    t2m[2, 1, :] = np.nan
    precip = rng.random((10, 5, 6)) * 20
    precip[0, 0, 0] = np.nan
    ds = xr.Dataset(
        {
            "t2m": (("time", "lat", "lon"), t2m, {"units": "K", "long_name": "2 metre temperature"}),
            "precip": (("time", "lat", "lon"), precip, {"units": "mm"}),
        },
        coords={
            "time": time,
            "lat": ("lat", lat, {"units": "degrees_north"}),
            "lon": ("lon", lon, {"units": "degrees_east"}),
            "region": ("lat", np.array(["south", "s\u00fcd-mid", "equator", "north-mid", "north"])),
        },
        attrs={"title": "climate-style test grid", "Conventions": "CF-1.8", "history": "written by xarray"},
    )
    ds["precip"].encoding = {"dtype": "int16", "scale_factor": 0.01, "add_offset": 100.0, "_FillValue": -32768}
    ds["time"].encoding = {"units": "hours since 2001-01-01", "calendar": "proleptic_gregorian"}
    for var in ("t2m", "precip"):
        ds[var].encoding["chunks"] = (4, 3, 6)
    return ds


def stations():
    names = np.array(["Z\u00fcrich", "", "S\u00e3o Paulo", "\u6771\u4eac", "x" * 50, "Oslo"], dtype=object)
    first = pd.to_datetime(["1990-05-01", None, "2003-01-31T12:00", "1870-01-01", "2020-02-29", None], format="ISO8601")
    return xr.Dataset(
        {
            "name": ("station", names),
            "code": ("station", np.array([b"ZRH", b"", b"GRU", b"HND", b"XXXX", b"OSL"], dtype="S4")),
            "label": ("station", np.array(["a", "bb", "", "dddd", "e", "f"], dtype="<U4")),
            "first_obs": ("station", first),
            "gap": ("station", pd.to_timedelta([1, 2, None, 4, 5, 6], unit="h")),
            "elevation": ("station", np.array([408.0, np.nan, 760.0, 6.0, 0.0, 23.0])),
            "active": ("station", np.array([True, False, True, True, False, True])),
        },
        coords={"station": np.arange(100, 106)},
        attrs={"source": "station table"},
    )


DATASETS = {"climate": climate, "stations": stations}


def write(outdir):
    for name, make in DATASETS.items():
        for fmt in (2, 3):
            for consolidated in (True, False):
                label = f"{name}_v{fmt}_{'cons' if consolidated else 'plain'}"
                make().to_zarr(f"{outdir}/{label}.zarr", zarr_format=fmt, consolidated=consolidated, mode="w")
                print(label)


def open_any(path, consolidated):
    if path.endswith(".zip"):
        store = zarr.storage.ZipStore(path, mode="r")
        return xr.open_zarr(store, consolidated=consolidated, chunks=None).load()
    # chunks=None: plain numpy arrays, no dask needed.
    return xr.open_zarr(path, consolidated=consolidated, chunks=None).load()


def check(source, export):
    want = open_any(source, None)
    problems = []
    for consolidated in (True, False):
        try:
            got = open_any(export, consolidated)
            xr.testing.assert_identical(got, want)
        except Exception as e:  # every reading is tried and every failure listed
            problems.append(f"{export} consolidated={consolidated}: {type(e).__name__}: {e}")
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"{export}: identical to {source}")


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    elif sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
