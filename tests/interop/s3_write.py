#!/usr/bin/env python3
"""Write one Zarr hierarchy with zarr-python twice: into a local folder and into object storage.

Usage: s3_write.py FOLDER S3_LOCATOR FORMAT
       s3_write.py compare FOLDER S3_LOCATOR

FORMAT is 3 or 2. `compare` reads every array of FOLDER and the same path at S3_LOCATOR (a
`zarrdb export` of its import) with zarr-python and fails on any difference of values
(bit-exact, NaN included), data type, shape or attributes. The same calls write both copies, so `zarrdb import` of the folder and of the
bucket must give equal databases (tests/s3_interop.rs). The bucket is reached through obstore on
the server the AWS_* variables name (transfer_check.s3_store).

Version 3: a root group with attributes; a float32 array with zstd, partly written; an int16
array with sharding, written in one corner; a bool array; a variable-length string array; one
array of each core numeric type (int8..uint64, float16..float64 with inf, NaN and -0.0,
complex64, complex128); a nested group with a uint64 array and a 0-d float64 array. Version 2: the same shapes and values
with zarr-python's v2 defaults (blosc compression), strings left out.
"""

import sys

import numpy as np
import zarr
from zarr.storage import LocalStore

from transfer_check import exit_without_finalizing, s3_store


def write(store, zarr_format):
    root = zarr.open_group(store, mode="w", zarr_format=zarr_format)
    root.attrs.update({"title": "written by zarr-python", "n": 3})
    t = root.create_array("t", shape=(30, 40), chunks=(8, 16), dtype="float32", fill_value=float("nan"),
                          **({"compressors": zarr.codecs.ZstdCodec(level=3)} if zarr_format == 3 else {}))
    t[4:20, 5:33] = np.arange(16 * 28, dtype="float32").reshape(16, 28) / 7
    s = root.create_array("s", shape=(64, 64), chunks=(8, 8), dtype="int16", fill_value=-1,
                          **({"shards": (32, 32)} if zarr_format == 3 else {}))
    s[:20, :40] = np.arange(800, dtype="int16").reshape(20, 40)
    root.create_array("b", shape=(9,), chunks=(4,), dtype="bool")[:] = np.arange(9) % 3 == 0
    if zarr_format == 3:
        words = np.array(["", "é", "zarr", "a longer string of text"] * 3, dtype=object)
        root.create_array("w", shape=(12,), chunks=(5,), dtype=str)[:] = words
    if zarr_format == 3:
        # Every core numeric type, each with values that use its range.
        types = root.create_group("types")
        for dtype in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                      "float32", "float64", "complex64", "complex128"]:
            kind = np.dtype(dtype)
            if kind.kind in "iu":
                info = np.iinfo(kind)
                values = np.linspace(info.min, info.max, 10, dtype="float64").astype(dtype)
            elif kind.kind == "f":
                values = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-3, 65504.0, 3.0], dtype=dtype)
            else:
                values = (np.arange(10) + 1j * np.arange(10, 0, -1)).astype(dtype)
            types.create_array(dtype, shape=(10,), chunks=(4,), dtype=dtype)[:] = values
    inner = root.create_group("inner/deeper")
    inner.attrs["depth"] = 2
    inner.create_array("u", shape=(5, 5), chunks=(5, 2), dtype="uint64")[:] = np.arange(25).reshape(5, 5) << 40
    inner.create_array("zero_d", shape=(), dtype="float64")[()] = -0.5


def compare(folder, locator):
    """Every array of the folder (as zarr-python wrote it) against the same path in the bucket (a
    zarrdb export): equal values (NaN where NaN, bit for bit) and attributes."""
    bucket, _, prefix = locator[len("s3://"):].partition("/")
    mine = zarr.open_group(LocalStore(folder, read_only=True), mode="r")
    theirs = zarr.open_group(s3_store(bucket, prefix, read_only=True), mode="r")
    problems, count = [], 0
    for path, arr in _walk(mine):
        count += 1
        try:
            other = theirs[path]
            want, got = arr[...], other[...]
            same = (want.dtype == got.dtype and want.shape == got.shape
                    and (np.array_equal(want, got, equal_nan=want.dtype.kind in "fc")
                         if want.dtype.kind != "O" else list(want.ravel()) == list(got.ravel())))
            if not same:
                problems.append(f"{path}: {got!r} != {want!r}")
            if dict(other.attrs) != dict(arr.attrs):
                problems.append(f"{path}: attributes {dict(other.attrs)} != {dict(arr.attrs)}")
        except Exception as e:  # every array is checked, every failure listed
            problems.append(f"{path}: {type(e).__name__}: {e}")
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"{count} arrays read from {locator} as written to {folder}")


def _walk(group, base=""):
    for name, member in group.members():
        path = f"{base}{name}"
        if isinstance(member, zarr.Array):
            yield path, member
        else:
            yield from _walk(member, path + "/")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        return compare(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    folder, locator, zarr_format = sys.argv[1], sys.argv[2], int(sys.argv[3])
    bucket, _, prefix = locator[len("s3://"):].partition("/")
    write(LocalStore(folder), zarr_format)
    write(s3_store(bucket, prefix, read_only=False), zarr_format)


if __name__ == "__main__":
    exit_without_finalizing(main)
