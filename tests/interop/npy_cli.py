#!/usr/bin/env python3
"""NumPy .npy files through the zarrdb command line, for tests/cli_npy_numpy.rs.

Usage:
  npy_cli.py ZARRDB STORE WORKDIR

numpy writes a .npy file per case (little- and big-endian, C and Fortran order, numbers, bools,
complex numbers, datetimes with NaT, fixed-width text and bytes, records); `zarrdb create`,
`zarrdb write` (a whole array, then a region), `zarrdb append` (from standard input) put them
into STORE; `zarrdb cat --npy` must give back what numpy wrote (np.load, values and dtype in
little-endian form), and zarr-python must read the same values: STORE itself when it is a
folder (dir:PATH), otherwise a `zarrdb export` of it. Exits 1 listing every difference.
"""
import io
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import zarr

warnings.simplefilter("ignore")


def cases():
    """(name, zarr data type as zarrdb create takes it, numpy array as saved)."""
    nat = np.datetime64("NaT")
    times = np.array(["2001-01-01T06:00:00", nat, "1969-12-31T23:59:59", "2026-11-27T00:00:00"], dtype="M8[s]")
    records = np.array([(1, 0.5), (-2, np.inf), (3, -0.0)], dtype=[("a", "<i4"), ("b", "<f8")])
    return [
        ("f4", "float32", np.arange(24, dtype="<f4").reshape(4, 6) / 3),
        ("i2_big_fortran", "int16", np.asfortranarray(np.arange(-30, 30, dtype=">i2").reshape(3, 4, 5))),
        ("c16", "complex128", np.array([1 + 2j, -0.5j, np.nan + 1j], dtype="<c16")),
        ("bool", "bool", np.array([[True, False], [False, True]])),
        ("times", json.dumps({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}), times),
        ("text", json.dumps({"name": "fixed_length_utf32", "configuration": {"length_bytes": 16}}),
         np.array(["ab", "", "b\u00e9ta", "\u65e5\u672c"], dtype="<U4")),
        ("bytes", json.dumps({"name": "null_terminated_bytes", "configuration": {"length_bytes": 3}}),
         np.array([b"ab", b"", b"xyz"], dtype="|S3")),
        ("records", json.dumps({"name": "structured", "configuration": {"fields": [["a", "int32"], ["b", "float64"]]}}),
         records),
    ]


def main():
    zarrdb, store, work = sys.argv[1:4]
    problems = []

    def run(*args, stdin=None):
        done = subprocess.run([zarrdb, *args], input=stdin, capture_output=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"zarrdb {' '.join(args)}: {done.stderr.decode(errors='replace')}")
        return done.stdout

    def same(a, b):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fcmM":
            return np.array_equal(a, b, equal_nan=True)
        return np.array_equal(a, b)

    expected = {}
    for name, dtype, values in cases():
        path = os.path.join(work, f"{name}.npy")
        np.save(path, values)
        shape = ",".join(str(n) for n in values.shape)
        run("create", store, f"/{name}", "--dtype", dtype, "--shape", shape)
        run("write", store, f"/{name}", path)
        back = np.load(io.BytesIO(run("cat", store, f"/{name}", "--npy")))
        if back.dtype != values.dtype.newbyteorder("<") or not same(back, values):
            problems.append(f"/{name}: cat --npy gave {back.dtype} {back!r}, numpy saved {values.dtype} {values!r}")
        expected[name] = values.astype(values.dtype.newbyteorder("<"))

    # A region: one row of f4, saved without its first dimension.
    row = np.full(6, -1.0, dtype="<f4")
    np.save(os.path.join(work, "row.npy"), row)
    run("write", store, "/f4", os.path.join(work, "row.npy"), "--region", "2,:")
    expected["f4"][2] = row
    # An append from standard input: two more rows.
    more = io.BytesIO()
    extra = np.arange(12, dtype="<f4").reshape(2, 6) * 100
    np.save(more, extra)
    run("append", store, "/f4", "-", "--axis", "0", stdin=more.getvalue())
    expected["f4"] = np.concatenate([expected["f4"], extra])
    back = np.load(io.BytesIO(run("cat", store, "/f4", "--npy")))
    if not same(back, expected["f4"]):
        problems.append(f"/f4 after write --region and append: {back!r}")
    # A region read: cat --npy drops the dimensions an index selects, as numpy does.
    part = np.load(io.BytesIO(run("cat", store, "/i2_big_fortran", "--npy", "--region", "1,1:3,:")))
    if not same(part, expected["i2_big_fortran"][1, 1:3, :]):
        problems.append(f"/i2_big_fortran[1, 1:3, :]: {part!r}")

    # zarr-python reads the same values.
    if store.startswith("dir:"):
        folder = store[len("dir:"):]
    else:
        folder = os.path.join(work, "exported")
        run("export", store, folder)
    group = zarr.open_group(folder, mode="r")
    for name, values in expected.items():
        got = group[name][...]
        if not same(got, values):
            problems.append(f"zarr-python /{name}: {got!r}, expected {values!r}")

    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
