#!/usr/bin/env python3
"""NumPy .npy files through the zarrdb command line, for tests/cli_npy_numpy.rs.

Usage:
  npy_cli.py ZARRDB STORE WORKDIR

numpy writes a .npy file per case (every fixed-size type NumPy and Zarr share: integers,
floats with -0.0/NaN/infinities, complex numbers, bools, datetimes and timedeltas with NaT,
fixed-width text and bytes, raw bits, records with an escaped field name; little- and
big-endian, C and Fortran order, 0-d and empty arrays); `zarrdb create`,
`zarrdb write` (a whole array, then a region), `zarrdb append` (from standard input) put them
into STORE; `zarrdb cat --npy` must give back what numpy wrote (np.load, values and dtype in
little-endian form, compared byte for byte), and zarr-python must read the same values: STORE itself when it is a
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


def ext(name, **configuration):
    return json.dumps({"name": name, "configuration": configuration})


def cases():
    """(name, zarr data type as zarrdb create takes it, numpy array as saved)."""
    nat = np.datetime64("NaT")
    times = np.array(["2001-01-01T06:00:00", nat, "1969-12-31T23:59:59", "2026-11-27T00:00:00"], dtype="M8[s]")
    records = np.array([(1, 0.5), (-2, np.inf), (3, -0.0)], dtype=[("a", "<i4"), ("it's \\ b", "<f8")])
    ints = np.array([[0, 1, -1], [127, -128, 5]])
    floats = np.array([0.5, -0.0, np.nan, np.inf, -np.inf, 1e-300])
    return [
        ("f4", "float32", np.arange(24, dtype="<f4").reshape(4, 6) / 3),
        ("i2_big_fortran", "int16", np.asfortranarray(np.arange(-30, 30, dtype=">i2").reshape(3, 4, 5))),
        ("i1", "int8", ints.astype("i1")),
        ("u1", "uint8", ints.astype("u1")),
        ("u2", "uint16", ints.astype("<u2")),
        ("u4_big", "uint32", ints.astype(">u4")),
        ("u8", "uint64", ints.astype("<u8") * (2**40)),
        ("i4", "int32", ints.astype("<i4")),
        ("i8_big", "int64", ints.astype(">i8") * (2**40)),
        ("f2", "float16", floats[:5].astype("<f2")),
        ("f8_big", "float64", floats.astype(">f8")),
        ("c8_big", "complex64", np.array([1 + 2j, -0.0 - 0.5j, np.nan], dtype=">c8")),
        ("c16", "complex128", np.array([1 + 2j, -0.5j, np.nan + 1j], dtype="<c16")),
        ("bool", "bool", np.array([[True, False], [False, True]])),
        ("times", ext("numpy.datetime64", unit="s", scale_factor=1), times),
        ("deltas_big", ext("numpy.timedelta64", unit="ns", scale_factor=10),
         np.array([1, -2, nat.astype("i8"), 0], dtype="i8").astype(">m8[10ns]")),
        ("text", ext("fixed_length_utf32", length_bytes=16), np.array(["ab", "", "b\u00e9ta", "\u65e5\u672c"], dtype="<U4")),
        ("text_big", ext("fixed_length_utf32", length_bytes=8), np.array(["xy", "\u00e9"], dtype=">U2")),
        ("bytes", ext("null_terminated_bytes", length_bytes=3), np.array([b"ab", b"", b"xyz"], dtype="|S3")),
        ("raw", "r24", np.frombuffer(b"abcdefghi", dtype="|V3")),
        ("records", ext("structured", fields=[["a", "int32"], ["it's \\ b", "float64"]]), records),
        ("scalar", "float64", np.array(2.5)),
        ("empty", "int16", np.zeros((0, 3), dtype="<i2")),
    ]


def little(values):
    """The array as zarrdb gives it back: little-endian, C order."""
    return np.ascontiguousarray(values.astype(values.dtype.newbyteorder("<")))


def main():
    zarrdb, store, work = sys.argv[1:4]
    problems = []

    def run(*args, stdin=None):
        done = subprocess.run([zarrdb, *args], input=stdin, capture_output=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"zarrdb {' '.join(args)}: {done.stderr.decode(errors='replace')}")
        return done.stdout

    def same(a, b):
        """Equal shape, type and bytes (so -0.0, NaN payloads and NaT count)."""
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()

    expected = {}
    for name, dtype, values in cases():
        path = os.path.join(work, f"{name}.npy")
        np.save(path, values)
        shape = ",".join(str(n) for n in values.shape)
        run("create", store, f"/{name}", "--dtype", dtype, "--shape", shape)
        run("write", store, f"/{name}", path)
        back = np.load(io.BytesIO(run("cat", store, f"/{name}", "--npy")))
        if not same(back, little(values)):
            problems.append(f"/{name}: cat --npy gave {back.dtype} {back!r}, numpy saved {values.dtype} {values!r}")
        expected[name] = little(values)

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

    # zarr-python reads the same values. It has no raw-bits type (`r24`), and would refuse the
    # whole hierarchy's consolidated metadata over it: that array goes first.
    run("rm", store, "/raw")
    del expected["raw"]
    if store.startswith("dir:"):
        folder = store[len("dir:"):]
    else:
        folder = os.path.join(work, "exported")
        run("export", store, folder)
    group = zarr.open_group(folder, mode="r")
    for name, values in expected.items():
        got = group[name][...]
        # zarr-python reads raw bits as its own void type and records with native field types.
        if name == "records":
            got = got.view(values.dtype) if got.dtype.itemsize == values.dtype.itemsize else got
        if not same(got, values):
            problems.append(f"zarr-python /{name}: {got.dtype} {got!r}, expected {values.dtype} {values!r}")

    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
