#!/usr/bin/env python3
"""Consolidated metadata after the CLI's editing commands, for tests/cli_edit_consolidated.rs.

Usage:
  cli_consolidated.py write PATH        xarray writes the dataset (Zarr v3, consolidated) to PATH,
                                        and PATH.time.npy / PATH.temperature.npy: two more time steps
  cli_consolidated.py check PATH        xarray opens PATH with consolidated=True (so it reads only
                                        the root's consolidated metadata) and must see every edit
                                        of tests/cli_edit_consolidated.rs; exits 1 listing what not
  cli_consolidated.py identical PATH    xarray opens PATH with consolidated=True: the dataset as
                                        written, with the attribute long_name="air" on temperature
"""
import sys
import warnings

import numpy as np
import pandas as pd
import xarray as xr

warnings.simplefilter("ignore")


def dataset():
    t = np.arange(6)
    return xr.Dataset(
        {
            "temperature": (("time", "x"), (100.0 * t[:, None] + np.arange(4)).astype("float32"), {"units": "K"}),
            "pressure": (("time",), (1000.0 + t).astype("float64")),
            "mask": (("x",), np.array([1, 0, 1, 1], dtype="uint8")),
        },
        coords={"time": pd.date_range("2020-01-01", periods=6, freq="D"), "x": np.arange(4, dtype="int32")},
        attrs={"title": "cli edits"},
    )


def main():
    command, path = sys.argv[1], sys.argv[2]
    if command == "write":
        encoding = {"time": {"units": "days since 2020-01-01", "dtype": "int64"}}
        dataset().to_zarr(path, zarr_format=3, consolidated=True, encoding=encoding, mode="w")
        np.save(path + ".time.npy", np.array([6, 7], dtype="<i8"))
        np.save(path + ".temperature.npy", np.array([[600, 601, 602, 603], [700, 701, 702, 703]], dtype="<f4"))
        return
    ds = xr.open_zarr(path, consolidated=True)
    if command == "identical":
        expected = dataset()
        expected["temperature"].attrs["long_name"] = "air"
        xr.testing.assert_identical(ds.load(), expected)
        return
    problems = []
    expect = [
        (ds.attrs.get("edited"), True, "root attribute set"),
        (ds.attrs.get("title"), None, "root attribute deleted"),
        (ds["temperature"].attrs.get("long_name"), "air", "variable attribute set"),
        ("mask" in ds.variables, False, "moved variable gone from its old name"),
        ("land_mask" in ds.variables, True, "moved variable under its new name"),
        ("pressure" in ds.variables, False, "removed variable"),
        (ds.sizes.get("time"), 8, "appended time steps"),
        (str(ds["time"].values[-1])[:10], "2020-01-08", "appended time coordinate"),
        (ds["temperature"].values[-1].tolist(), [700.0, 701.0, 702.0, 703.0], "appended values"),
        ("extra" in ds.variables and ds["extra"].dims, ("x",), "created variable with its dimension"),
    ]
    for got, want, what in expect:
        if got != want:
            problems.append(f"{what}: got {got!r}, expected {want!r}")
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
