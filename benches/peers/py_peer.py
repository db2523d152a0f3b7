"""One measurement in a fresh process for the Python peers: tensorstore's zarr3 driver or
zarr-python 3 (its default, batched codec pipeline) on a directory, as `peer` (src/main.rs) does for
zarrdb and zarrs. Prints one JSON line: {"seconds": ..., "bytes": ..., "overhead_rss_bytes": ...}.

    python py_peer.py TARGET PHASE WORKLOAD PATH --workloads FILE --data-module DIR [--sync]

TARGET is tensorstore or zarr; --sync fsyncs every file and folder written, timed with the write.
"""

import argparse
import json
import os
import resource
import sys
import time

import numpy as np


def sync_tree(root: str) -> None:
    for folder, _, names in os.walk(root):
        for name in names:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def tensorstore_run(w: dict, path: str, data) -> np.ndarray | None:
    import tensorstore as ts

    if data is not None:
        spec = {
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
        arr = ts.open(spec, create=True, delete_existing=True).result()
        arr.write(data).result()
        return None
    return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}).result().read().result()


def zarr_run(w: dict, path: str, data) -> np.ndarray | None:
    import zarr
    from zarr.storage import LocalStore

    if data is not None:
        store = LocalStore(path)
        codecs = w["codecs"]
        if codecs[0]["name"] == "sharding_indexed":
            conf = codecs[0]["configuration"]
            arr = zarr.create_array(
                store,
                shape=w["shape"],
                shards=w["chunks"],
                chunks=conf["chunk_shape"],
                dtype=w["dtype"],
                compressors=zarr.codecs.ZstdCodec(level=1),
                fill_value=0,
            )
        else:
            compressors = [zarr.codecs.ZstdCodec(level=1)] if len(codecs) > 1 else None
            arr = zarr.create_array(
                store, shape=w["shape"], chunks=w["chunks"], dtype=w["dtype"], compressors=compressors, fill_value=0
            )
        arr[...] = data
        store.close()
        return None
    return zarr.open_array(LocalStore(path, read_only=True), mode="r")[...]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("target", choices=["tensorstore", "zarr"])
    parser.add_argument("phase", choices=["write", "read"])
    parser.add_argument("workload")
    parser.add_argument("path")
    parser.add_argument("--workloads", required=True)
    parser.add_argument("--data-module", required=True)
    parser.add_argument("--sync", action="store_true")
    args = parser.parse_args()
    with open(args.workloads) as f:
        w = json.load(f)[args.workload]
    sys.path.insert(0, args.data_module)
    from bench_data import bench_data

    data = bench_data(int(np.prod(w["shape"]))).reshape(w["shape"])
    run = tensorstore_run if args.target == "tensorstore" else zarr_run
    path = os.path.join(args.path, "zarr")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.perf_counter()
    back = run(w, path, data if args.phase == "write" else None)
    if args.phase == "write" and args.sync:
        sync_tree(path)
    seconds = time.perf_counter() - start
    if back is not None and not np.array_equal(back, data):
        raise SystemExit("the array read back differs from the data written")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    overhead = max(0, peak - before - (data.nbytes if args.phase == "read" else 0))
    print(json.dumps({"seconds": seconds, "bytes": int(data.nbytes), "overhead_rss_bytes": overhead}))


if __name__ == "__main__":
    main()
