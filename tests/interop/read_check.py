#!/usr/bin/env python3
"""Read every array of a fixture manifest with zarr-python AND tensorstore; compare bytes exactly.

Usage: read_check.py MANIFEST

MANIFEST is a JSON list of entries
    {"store": DIR, "path": "/array/path", "writer": NAME, "expected": RAWFILE,
     "skip_readers": {READER: WHY, ...}}          <- optional
where DIR and RAWFILE are relative to the manifest's folder (or absolute), and RAWFILE holds the
array's full content as C-order little-endian bytes. Values are compared as bytes, not as numbers,
so NaN payloads and the sign of zero count. `skip_readers` names readers known to misread that
array (a reader bug, documented in write_fixtures.py); the entry is still checked with the others.

Prints one line per failure and exits 1 if there was any.
"""

import json
import os
import sys

import numpy as np
import tensorstore as ts
import zarr


def le_bytes(arr):
    """C-order little-endian bytes of a numpy array (bit-exact: byte swaps, no value conversions)."""
    a = np.ascontiguousarray(np.asarray(arr))
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and sys.byteorder == "big"):
        a = a.byteswap().view(a.dtype.newbyteorder("<"))
    return a.tobytes()


def array_dir(store_dir, path):
    return os.path.join(store_dir, *path.strip("/").split("/"))


def read_zarr_python(store_dir, path):
    arr = zarr.open_array(store=store_dir, path=path.strip("/"), mode="r", zarr_format=3)
    return arr[...]


def read_tensorstore(store_dir, path):
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": array_dir(store_dir, path) + "/"}}
    return ts.open(spec, read=True).result().read().result()


READERS = {"zarr-python": read_zarr_python, "tensorstore": read_tensorstore}


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: read_check.py MANIFEST")
    base = os.path.dirname(os.path.abspath(sys.argv[1]))
    with open(sys.argv[1]) as f:
        entries = json.load(f)
    failures, reads = 0, 0
    for e in entries:
        store_dir = os.path.join(base, e["store"])
        with open(os.path.join(base, e["expected"]), "rb") as f:
            want = f.read()
        name = f"{e['store']}{e['path']} (written by {e['writer']})"
        skip = e.get("skip_readers", {})
        for reader, read in READERS.items():
            if reader in skip:
                continue
            reads += 1
            try:
                got = le_bytes(read(store_dir, e["path"]))
            except Exception as err:  # one line per failure, keep checking the rest
                failures += 1
                print(f"FAIL {name}: {reader} could not read it: {type(err).__name__}: {err}")
                continue
            if got != want:
                failures += 1
                at = first_difference(got, want)
                print(f"FAIL {name}: {reader} read {len(got)} bytes, expected {len(want)}; "
                      f"first difference at byte {at}: got {got[at:at + 8].hex()} want {want[at:at + 8].hex()}")
    if failures:
        print(f"read_check: {failures} of {reads} reads FAILED")
        sys.exit(1)
    print(f"read_check: {len(entries)} arrays x {len(READERS)} readers ok ({reads} reads)")


if __name__ == "__main__":
    main()
