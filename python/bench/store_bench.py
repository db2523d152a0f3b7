#!/usr/bin/env python3
"""zarr-python through ``ZarrdbStore`` against ``zarr.storage.LocalStore``, and ``MemoryStore`` as
the ceiling (issue 15, ../shared/BENCHMARKS.md).

Per workload and run, each store in turn (the order rotates between runs, so no store is always
first after another's writes): one fresh process creates the array with zarr-python and writes it
whole in one ``arr[:] = data``; a second fresh process opens it and reads it whole, and checks the
bytes (untimed). Figures are MB/s of uncompressed bytes, median and range over the runs.

What is timed: write = ``create_array`` + ``arr[:] = data`` (+ the sync, for ``local_sync``) +
``close``; read = opening the store and the array + ``arr[:]``. ``memory`` writes and reads in one
process (a ``MemoryStore`` lives in its process): it is what zarr-python itself costs, the bound
of any store's figure.

Run with the venv's python: ``.venv/bin/python python/bench/store_bench.py [--quick] [--json]``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

# The shared workloads (../shared/bench/workloads.json) this bench runs: shape, chunk shape and
# the codecs the written metadata must show. `--quick` keeps the chunk shapes on small arrays.
_CODECS = [
    {"name": "bytes", "configuration": {"endian": "little"}},
    {"name": "zstd", "configuration": {"level": 1, "checksum": False}},
]
WORKLOADS: dict[str, dict[str, Any]] = {
    "big_zstd": {"shape": (8192, 8192), "quick": (1024, 1024), "chunks": (512, 512)},
    "small_chunks": {"shape": (4096, 4096), "quick": (256, 256), "chunks": (32, 32)},
}

STORES = {
    "zarrdb": "ZarrdbStore(path): the default, redb multi-writer (several processes), durable",
    "zarrdb_single": "ZarrdbStore(path, multi_process=False): redb single-process, durable",
    "zarrdb_fast": 'ZarrdbStore(path, durability="fast"): single-process, fast commits',
    "zarrdb_cache1g": "ZarrdbStore(path, cache_size=1 GiB): the default with redb's own cache size",
    "zarrdb_pipeline": "ZarrdbStore(path) with zarr's codec_pipeline.path set to zarrdb.CodecPipeline",
    "zarrdb_pipeline_fast": 'ZarrdbStore(path, durability="fast") with zarrdb.CodecPipeline',
    "zarrdb_pipeline_cache1g": "ZarrdbStore(path, cache_size=1 GiB) with zarrdb.CodecPipeline",
    "local_sync": "LocalStore(dir), then fsync of every file and folder written (timed)",
    "local": "LocalStore(dir), no sync",
    "memory": "MemoryStore(): zarr-python's own cost, write and read in one process",
    "disk_sync": "no Zarr: the array's raw bytes written to one file and fsynced, the disk's own floor"
    " for making that many bytes durable (read: the file read back)",
}

# Every child process is bounded; a full-size run takes seconds, a stuck one is a failure.
CHILD_TIMEOUT_S = 900


# -- child processes ---------------------------------------------------------------------------


def _open_store(kind: str, path: Path, read_only: bool) -> Any:
    if kind.startswith("zarrdb"):
        import zarrdb

        options: dict[str, Any] = {"read_only": read_only}
        if kind in ("zarrdb_fast", "zarrdb_pipeline_fast"):
            options["durability"] = "fast"
        if kind == "zarrdb_single":
            options["multi_process"] = False
        if kind in ("zarrdb_cache1g", "zarrdb_pipeline_cache1g"):
            options["cache_size"] = 1 << 30
        if kind.startswith("zarrdb_pipeline"):
            import zarr

            # Set before the array opens: zarr-python picks an array's pipeline when it opens it.
            zarr.config.set({"codec_pipeline.path": "zarrdb.CodecPipeline"})
        return zarrdb.ZarrdbStore(path, **options)
    from zarr.storage import LocalStore

    return LocalStore(path, read_only=read_only)


def _fsync_tree(root: Path) -> None:
    """fsync every file, then every folder (so the renames LocalStore did are durable too)."""
    folders = []
    for folder, _, files in os.walk(root):
        folders.append(folder)
        for name in files:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    for folder in folders:
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _create_and_write(store: Any, data: Any, chunks: tuple[int, ...]) -> Any:
    import zarr
    from zarr.codecs import ZstdCodec

    arr = zarr.create_array(
        store,
        shape=data.shape,
        chunks=chunks,
        dtype="float32",
        fill_value=0.0,
        compressors=ZstdCodec(level=1, checksum=False),
        zarr_format=3,
    )
    arr[:] = data
    return arr


def _check_codecs(arr: Any) -> None:
    codecs = list(arr.metadata.to_dict()["codecs"])
    if codecs != _CODECS:
        raise SystemExit(f"the array's codecs {codecs} are not the workload's {_CODECS}")


def _check_read(got: Any, data: Any) -> None:
    if got.shape != data.shape or got.tobytes() != data.tobytes():
        raise SystemExit("the array read back differs from the data written")


def child(args: argparse.Namespace) -> dict[str, float]:
    """One phase in this (fresh) process; the timings in seconds."""
    import numpy as np
    import zarr

    data = np.load(args.data)
    chunks = tuple(args.chunks)
    path = Path(args.path)
    if args.store == "memory":
        from zarr.storage import MemoryStore

        held: dict[str, Any] = {}
        start = time.perf_counter()
        _create_and_write(MemoryStore(held), data, chunks)
        written = time.perf_counter()
        got = zarr.open_array(MemoryStore(held, read_only=True), mode="r")[:]
        read = time.perf_counter()
        _check_read(got, data)
        return {"write_s": written - start, "read_s": read - written}
    if args.store == "disk_sync":
        raw = path / "data.bin"
        start = time.perf_counter()
        if args.phase in ("write", "both"):
            with open(raw, "wb") as f:
                f.write(memoryview(data).cast("B"))
                f.flush()
                os.fsync(f.fileno())
            raw_timed: dict[str, float] = {"write_s": time.perf_counter() - start}
            if args.phase == "write":
                return raw_timed
            start = time.perf_counter()
        else:
            raw_timed = {}
        got = np.fromfile(raw, dtype=data.dtype).reshape(data.shape)
        elapsed = time.perf_counter() - start
        _check_read(got, data)
        return raw_timed | {"read_s": elapsed}
    timed: dict[str, float] = {}
    if args.phase in ("write", "both"):
        start = time.perf_counter()
        store = _open_store(args.store, path, read_only=False)
        arr = _create_and_write(store, data, chunks)
        if args.store == "local_sync":
            _fsync_tree(path)
        store.close()
        timed["write_s"] = time.perf_counter() - start
        _check_codecs(arr)
        if args.phase == "write":
            return timed
    start = time.perf_counter()
    store = _open_store(args.store, path, read_only=True)
    got = zarr.open_array(store, mode="r")[:]
    elapsed = time.perf_counter() - start
    store.close()
    _check_read(got, data)
    return timed | {"read_s": elapsed}


# -- the driver --------------------------------------------------------------------------------


def _run_child(phase: str, store: str, path: Path, data: Path, chunks: tuple[int, ...]) -> dict[str, float]:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        phase,
        "--store",
        store,
        "--path",
        str(path),
        "--data",
        str(data),
        "--chunks",
        *map(str, chunks),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{store} {phase} failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _config() -> dict[str, Any]:
    import numcodecs
    import numpy
    import zarr


    return {
        "zarr": zarr.__version__,
        "numpy": numpy.__version__,
        "numcodecs": numcodecs.__version__,
        "zarrdb": importlib.metadata.version("zarrdb"),
        "async.concurrency": zarr.config.get("async.concurrency"),
        "threading.max_workers": zarr.config.get("threading.max_workers"),
        "cpus": os.cpu_count(),
    }


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Every (workload, store) pair, alternating stores within each run."""
    import numpy as np

    sys.path.insert(0, str(HERE))
    from bench_arrays import bench_array, check

    check()
    stores = args.store or list(STORES)
    names = args.workload or list(WORKLOADS)
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    load_before = os.getloadavg()
    results: dict[str, Any] = {}
    base = Path(tempfile.mkdtemp(prefix="zarrdb-store-bench-", dir=args.tmp))
    try:
        for name in names:
            workload = WORKLOADS[name]
            shape = workload["quick" if args.quick else "shape"]
            data_file = base / f"{name}.npy"
            np.save(data_file, bench_array(shape))
            mb = int(np.prod(shape)) * 4 / 1e6
            times: dict[str, dict[str, list[float]]] = {s: {"write_s": [], "read_s": []} for s in stores}
            for run in range(args.runs):
                order = stores[run % len(stores) :] + stores[: run % len(stores)]
                for store in order:
                    target = base / f"{name}-{store}-{run}"
                    if store != "memory" and not store.startswith("zarrdb"):
                        target.mkdir()
                    # Quick mode (the test's) writes and reads in one process: half the
                    # interpreters to start; the figures are not what it is for.
                    phase = "both" if args.quick else "write"
                    timed = _run_child(phase, store, target, data_file, workload["chunks"])
                    if store != "memory" and phase == "write":
                        timed |= _run_child("read", store, target, data_file, workload["chunks"])
                    for phase, seconds in timed.items():
                        times[store][phase].append(seconds)
                    if target.is_dir():
                        shutil.rmtree(target)
                    elif target.exists():
                        target.unlink()
            results[name] = {
                "shape": list(shape),
                "chunks": list(workload["chunks"]),
                "MB": mb,
                "stores": {
                    store: {
                        "write_MBps": _summary([mb / s for s in t["write_s"]]),
                        "read_MBps": _summary([mb / s for s in t["read_s"]]),
                    }
                    for store, t in times.items()
                },
            }
            data_file.unlink()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return {
        "started": started,
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "runs": args.runs,
        "quick": args.quick,
        "config": _config(),
        "workloads": results,
    }


def _ratio(num: dict[str, Any], den: dict[str, Any], figure: str) -> str:
    return f"{num[figure]['median'] / den[figure]['median']:.2f}x"


def table(report: dict[str, Any]) -> str:
    """The figures as a Markdown table: median (min-max) MB/s, and ratios to LocalStore."""
    lines = [
        f"started {report['started']}, load {report['load_before'][0]:.2f} before, "
        f"{report['load_after'][0]:.2f} after; {report['runs']} runs; {report['config']}",
        "",
        "| workload | store | write MB/s | read MB/s | write / local(_sync) | read / local |",
        "|---|---|---|---|---|---|",
    ]
    for name, w in report["workloads"].items():
        stores = w["stores"]
        for store, f in stores.items():
            cells = [
                f"{f[p]['median']:.1f} ({f[p]['min']:.1f}-{f[p]['max']:.1f})"
                for p in ("write_MBps", "read_MBps")
            ]
            # Durable commits compare with the synced directory, fast ones with the unsynced one.
            peer = "local" if store in ("zarrdb_fast", "memory") else "local_sync"
            ratios = ["", ""]
            if peer in stores and store != peer:
                ratios[0] = _ratio(f, stores[peer], "write_MBps") + f" ({peer})"
            if "local" in stores and store not in ("local", "local_sync"):
                ratios[1] = _ratio(f, stores["local"], "read_MBps")
            lines.append(f"| {name} {w['shape']} / {w['chunks']} | {store} | " + " | ".join(cells + ratios) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small shapes (same chunk shapes)")
    parser.add_argument("--runs", type=int, default=None, help="runs per store (default 3, quick 1)")
    parser.add_argument("--workload", action="append", choices=list(WORKLOADS))
    parser.add_argument("--store", action="append", choices=list(STORES))
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--tmp", default=None, help="folder for the stores (default: the temp dir)")
    # The child side (internal).
    parser.add_argument("--child", choices=("write", "read", "both"), help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--chunks", type=int, nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.phase = args.child
        args.store = args.store[0]
        print(json.dumps(child(args)))
        return
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    report = measure(args)
    print(json.dumps(report, indent=1) if args.json else table(report))


if __name__ == "__main__":
    main()
