"""Peer figures for the whole-array workloads: tensorstore's zarr3 driver on a directory.

Same shapes, chunks, codecs and data (../shared/bench/bench_data.py) as `zarrdb bench`: create,
write the whole array in one call, open afresh, read it whole; median MB/s of uncompressed bytes.
Not part of the test suite. Run with the venv that scripts/test.sh creates:

    .venv/bin/python benches/peers/tensorstore_whole_array.py [RUNS]
"""
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
import tensorstore as ts
from importlib.metadata import version

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "shared", "bench"))
from bench_data import bench_data  # noqa: E402

with open(os.path.join(HERE, "..", "..", "..", "shared", "bench", "workloads.json")) as f:
    WORKLOADS = {k: v for k, v in json.load(f).items() if not k.startswith("_")}


def spec(path, w):
    return {
        "driver": "zarr3",
        "kvstore": {"driver": "file", "path": path},
        "metadata": {
            "shape": w["shape"],
            "data_type": w["dtype"],
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": w["chunks"]}},
            "codecs": w["codecs"],
            "fill_value": 0,
        },
    }


def run(name, w, runs):
    data = bench_data(int(np.prod(w["shape"]))).reshape(w["shape"])
    mb = data.nbytes / 1e6
    writes, reads = [], []
    for _ in range(runs):
        root = tempfile.mkdtemp(prefix="ts-bench-")
        try:
            arr = ts.open(spec(root, w), create=True, delete_existing=True).result()
            t = time.perf_counter()
            arr.write(data).result()
            writes.append(mb / (time.perf_counter() - t))
            t = time.perf_counter()
            back = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": root}}).result().read().result()
            reads.append(mb / (time.perf_counter() - t))
            assert np.array_equal(back, data)
        finally:
            shutil.rmtree(root)
    return {"workload": name, "peer": "tensorstore " + version("tensorstore"), "backend": "directory",
            "write_MBps": round(statistics.median(writes), 1), "read_MBps": round(statistics.median(reads), 1)}


if __name__ == "__main__":
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    for name, w in WORKLOADS.items():
        print(json.dumps(run(name, w, runs)), flush=True)
