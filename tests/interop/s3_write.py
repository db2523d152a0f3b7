#!/usr/bin/env python3
"""Write one Zarr hierarchy with zarr-python twice: into a local folder and into object storage.

Usage: s3_write.py FOLDER S3_LOCATOR FORMAT

FORMAT is 3 or 2. The same calls write both copies, so `zarrdb import` of the folder and of the
bucket must give equal databases (tests/s3_interop.rs). The bucket is reached through obstore on
the server the AWS_* variables name (transfer_check.s3_store).

Version 3: a root group with attributes; a float32 array with zstd, partly written; an int16
array with sharding, written in one corner; a bool array; a variable-length string array; a
nested group with a uint64 array and a 0-d float64 array. Version 2: the same shapes and values
with zarr-python's v2 defaults (blosc compression), strings left out.
"""

import sys

import numpy as np
import zarr
from zarr.storage import LocalStore

from transfer_check import s3_store


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
    inner = root.create_group("inner/deeper")
    inner.attrs["depth"] = 2
    inner.create_array("u", shape=(5, 5), chunks=(5, 2), dtype="uint64")[:] = np.arange(25).reshape(5, 5) << 40
    inner.create_array("zero_d", shape=(), dtype="float64")[()] = -0.5


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    folder, locator, zarr_format = sys.argv[1], sys.argv[2], int(sys.argv[3])
    bucket, _, prefix = locator[len("s3://"):].partition("/")
    write(LocalStore(folder), zarr_format)
    write(s3_store(bucket, prefix, read_only=False), zarr_format)


if __name__ == "__main__":
    main()
