"""The numeric xarray dataset of the real-world dataset tests (tests/xarray_*.rs).

    xarray_dataset.py write PATH FORMAT [--no-consolidated]   ds.to_zarr(PATH, zarr_format=FORMAT)
    xarray_dataset.py identical PATH                          open_zarr(PATH, consolidated=False) == dataset()
    xarray_dataset.py appended PATH ROWS                      open_zarr(PATH, consolidated=True) is
                                                              dataset() grown by ROWS time steps
    xarray_dataset.py open_consolidated PATH ROWS             zarr.open_consolidated reads every
                                                              variable of dataset(ROWS)

Numeric variables only (no strings or objects); the time coordinate is a datetime64, which
xarray CF-encodes as int64. Exits non-zero with a message on any difference.
"""

import sys

import numpy as np
import pandas as pd
import xarray as xr
import zarr

TIMES = 6


def dataset(rows=0):
    """The dataset, with `rows` extra time steps as the Rust tests append them: time step t has
    temperature 100 * t + x and pressure 1000 + t (float64), and the time coordinate counts days."""
    n = TIMES + rows
    t = np.arange(n)
    x = np.arange(4)
    temperature = (100.0 * t[:, None] + x[None, :]).astype("float32")
    pressure = (1000.0 + t).astype("float64")
    return xr.Dataset(
        {
            "temperature": (("time", "x"), temperature, {"units": "K"}),
            "pressure": (("time",), pressure),
            "mask": (("x",), np.array([1, 0, 1, 1], dtype="uint8")),
        },
        coords={
            "time": pd.date_range("2020-01-01", periods=n, freq="D"),
            "x": x.astype("int32"),
        },
        attrs={"title": "zarrdb real-world test"},
    )


def write(path, zarr_format, consolidated):
    ds = dataset()
    # Chunks of 4 time steps: the appended rows fill the edge chunk and start a new one.
    encoding = {"temperature": {"chunks": (4, 2)}, "pressure": {"chunks": (4,)}, "time": {"chunks": (4,)}}
    ds.to_zarr(path, zarr_format=zarr_format, consolidated=consolidated, encoding=encoding, mode="w")


def main():
    command, path = sys.argv[1], sys.argv[2]
    if command == "write":
        write(path, int(sys.argv[3]), "--no-consolidated" not in sys.argv)
    elif command == "identical":
        got = xr.open_zarr(path, consolidated=False).load()
        xr.testing.assert_identical(got, dataset())
    elif command == "appended":
        got = xr.open_zarr(path, consolidated=True).load()
        xr.testing.assert_identical(got, dataset(int(sys.argv[3])))
    elif command == "open_consolidated":
        group = zarr.open_consolidated(path, zarr_format=3)
        want = dataset(int(sys.argv[3]))
        for name in want.variables:
            values = group[name][...]
            if name == "time":
                values = values.shape
                expected = want[name].shape
            else:
                expected = want[name].values
            if not np.array_equal(values, expected):
                sys.exit(f"{name}: {values} != {expected}")
        if group.metadata.consolidated_metadata is None:
            sys.exit("no consolidated metadata")
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
