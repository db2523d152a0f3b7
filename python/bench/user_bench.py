#!/usr/bin/env python3
"""Speed and space as users meet them (issue 41): zarrdb against LocalStore, icechunk, zarr-sqlite
and ZipStore, on the same workloads, in one run.

Workloads, each store in fresh processes, the store order rotating between runs:

- ``chunks``: 10,000 chunks of 4 KiB (float32, no compression) written one by one, ``a[i] = block``
  in a Python loop (``--quick``: 200). Timed: opening the store, ``create_array``, the loop, the
  store's own commit (icechunk) and ``close``.
- ``to_zarr``: an xarray dataset of several variables (4 float32 fields of 120 x 180 x 360 on a
  time/lat/lon grid, ~124 MB, zarr's default codecs) written with ``ds.to_zarr(store)``. Timed as
  above.
- ``open_load``: in a fresh process, ``xr.open_zarr(store).load()`` of what ``to_zarr`` wrote;
  then (untimed) the values are checked against the dataset written.

Each child imports numpy, xarray, zarr and the store's package before its timer starts.

After each writing workload (store closed, no compaction asked for) the file(s) on disk are
measured against the stored bytes: the sum of the lengths of the values the store lists
(read back through the store). Figures are seconds, median (min-max) over the runs; ratios
compare medians with LocalStore's.

What each store makes durable differs (docs/benchmarks.md states it): zarrdb's default commits
each assignment durably (fsync before it returns); LocalStore and ZipStore never fsync; icechunk
writes its chunk files as they come and makes the version durable only at ``commit`` (the end);
zarr-sqlite commits each set in SQLite's WAL mode (SQLite's default ``synchronous``).

Run with the bench venv's python: ``.venv-bench/bin/python python/bench/user_bench.py [--quick]
[--json] [--runs N] [--store NAME]... [--workload NAME]...``.
"""

from __future__ import annotations

import argparse
import asyncio
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

STORES = {
    "zarrdb": "ZarrdbStore(path): the default (redb multi-writer, every commit durable)",
    "zarrdb_single": "ZarrdbStore(path, multi_process=False): one process, every commit durable",
    "zarrdb_fast": 'ZarrdbStore(path, durability="fast"): one process, synced at least every second'
    " and at close",
    "local": "zarr.storage.LocalStore(dir): a file per key, never fsynced",
    "icechunk": "icechunk 2.3 Repository on local_filesystem_storage, one writable session,"
    " committed at the end",
    "sqlite": "zarr_sqlite.SQLiteStore(path): SQLite, WAL journal, a commit per set",
    "zip": "zarr.storage.ZipStore(path, mode='w'): one zip file, never fsynced",
}
# The stores whose package may be missing: skipped with the reason, not failed.
OPTIONAL = {"icechunk": "icechunk", "sqlite": "zarr_sqlite"}
WORKLOADS = ("chunks", "to_zarr", "open_load")

CHUNK = 1024  # float32 values: 4 KiB chunks
N_CHUNKS = {"full": 10_000, "quick": 200}
# (time, lat, lon) of each of the dataset's variables, and its chunks.
GRID = {"full": ((120, 180, 360), (12, 90, 180)), "quick": ((8, 18, 36), (4, 9, 18))}
VARIABLES = ("temperature", "pressure", "wind_u", "wind_v")

CHILD_TIMEOUT_S = 900


# -- stores ------------------------------------------------------------------------------------


def _missing(store: str) -> str | None:
    """Why `store` cannot run here, or None."""
    module = OPTIONAL.get(store)
    if module is None:
        return None
    try:
        __import__(module)
    except ImportError as e:
        return f"{module} is not importable ({e})"
    return None


class _Opened:
    """A store opened for one phase, and what ends the phase (icechunk's commit)."""

    def __init__(self, kind: str, path: Path, read_only: bool) -> None:
        self.kind = kind
        self.session: Any = None
        if kind.startswith("zarrdb"):
            import zarrdb

            options: dict[str, Any] = {}
            if kind == "zarrdb_single":
                options["multi_process"] = False
            elif kind == "zarrdb_fast":
                options["durability"] = "fast"
            self.store = zarrdb.ZarrdbStore(path / "data.zarrdb", read_only=read_only, **options)
        elif kind == "local":
            from zarr.storage import LocalStore

            self.store = LocalStore(path / "data.zarr", read_only=read_only)
        elif kind == "zip":
            from zarr.storage import ZipStore

            self.store = ZipStore(path / "data.zip", mode="r" if read_only else "w", read_only=read_only)
        elif kind == "sqlite":
            from zarr_sqlite import SQLiteStore

            self.store = SQLiteStore(str(path / "data.sqlite"), read_only=read_only)
        elif kind == "icechunk":
            import icechunk

            storage = icechunk.local_filesystem_storage(str(path / "repo"))
            if read_only:
                repo = icechunk.Repository.open(storage)
                self.session = repo.readonly_session(branch="main")
            else:
                repo = icechunk.Repository.open_or_create(storage)
                self.session = repo.writable_session("main")
            self.store = self.session.store
        else:
            raise SystemExit(f"unknown store {kind!r}")

    def finish(self) -> None:
        if self.session is not None and not self.session.read_only:
            self.session.commit("user_bench")
        close = getattr(self.store, "close", None)
        if close is not None and self.kind != "icechunk":
            close()


def _disk_bytes(path: Path) -> int:
    """The length of every file under `path` (what a copy or an archive of it carries)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _stored_bytes(kind: str, path: Path) -> int:
    """The sum of the lengths of the values the store lists, read back through it."""
    opened = _Opened(kind, path, read_only=True)
    store = opened.store

    async def total() -> int:
        from zarr.core.buffer import default_buffer_prototype

        n = 0
        async for key in store.list():
            value = await store.get(key, default_buffer_prototype())
            n += 0 if value is None else len(value)
        return n

    try:
        return asyncio.run(total())
    finally:
        opened.finish()


# -- workloads (in child processes) ------------------------------------------------------------


def _blocks(n: int) -> Any:
    import numpy as np

    return np.random.default_rng(41).random((n, CHUNK), dtype=np.float32)


def _dataset(size: str) -> Any:
    import numpy as np
    import xarray as xr

    (nt, ny, nx), _ = GRID[size]
    rng = np.random.default_rng(7)
    t = np.arange(nt, dtype=np.float32)[:, None, None]
    lat = np.linspace(-89.5, 89.5, ny, dtype=np.float32)
    lon = np.linspace(0.5, 359.5, nx, dtype=np.float32)
    smooth = np.cos(np.deg2rad(lat))[None, :, None] * np.sin(np.deg2rad(lon))[None, None, :]
    fields = {}
    for i, name in enumerate(VARIABLES):
        noise = rng.normal(0, 1, (nt, ny, nx)).astype(np.float32)
        # Smooth fields with sensor-like noise at limited precision: compressible, not trivially.
        values = (10 * (i + 1) * smooth + np.sin(t / 6 + i) + noise).round(2).astype(np.float32)
        fields[name] = (("time", "lat", "lon"), values, {"units": "1"})
    coords = {"time": np.arange(nt, dtype=np.int64), "lat": lat, "lon": lon}
    return xr.Dataset(fields, coords=coords, attrs={"title": "user_bench"})


def child(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np
    import xarray as xr
    import zarr

    # The store's package is imported before any timing starts, as zarr-python's (LocalStore's,
    # ZipStore's) is: the workloads time what a program does with a store, not its imports.
    __import__("zarrdb" if args.store.startswith("zarrdb") else OPTIONAL.get(args.store, "zarr"))
    path = Path(args.path)
    size = "quick" if args.quick else "full"
    if args.phase == "chunks":
        n = args.chunks or N_CHUNKS[size]
        blocks = _blocks(n)
        start = time.perf_counter()
        opened = _Opened(args.store, path, read_only=False)
        a = zarr.create_array(
            opened.store, name="a", shape=(n * CHUNK,), chunks=(CHUNK,), dtype="float32",
            compressors=None, fill_value=0,
        )
        for i in range(n):
            a[i * CHUNK : (i + 1) * CHUNK] = blocks[i]
        opened.finish()
        elapsed = time.perf_counter() - start
        check = _Opened(args.store, path, read_only=True)
        got = zarr.open_array(check.store, path="a", mode="r")[:]
        check.finish()
        if not np.array_equal(got, blocks.reshape(-1)):
            raise SystemExit(f"{args.store}: the chunks read back differ from those written")
    elif args.phase == "to_zarr":
        ds = _dataset(size)
        _, chunks = GRID[size]
        encoding = {name: {"chunks": chunks} for name in VARIABLES}
        start = time.perf_counter()
        opened = _Opened(args.store, path, read_only=False)
        # icechunk keeps its own metadata: consolidated metadata is refused there.
        consolidated = False if args.store == "icechunk" else None
        ds.to_zarr(opened.store, mode="w", encoding=encoding, consolidated=consolidated, zarr_format=3)
        opened.finish()
        elapsed = time.perf_counter() - start
    else:
        start = time.perf_counter()
        opened = _Opened(args.store, path, read_only=True)
        consolidated = False if args.store == "icechunk" else None
        got = xr.open_zarr(opened.store, consolidated=consolidated).load()
        elapsed = time.perf_counter() - start
        opened.finish()
        xr.testing.assert_identical(got, _dataset(size))
        return {"seconds": elapsed}
    return {
        "seconds": elapsed,
        "disk_bytes": _disk_bytes(path),
        "stored_bytes": _stored_bytes(args.store, path),
    }


# -- the driver --------------------------------------------------------------------------------


def _run_child(phase: str, store: str, path: Path, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", phase, "--store", store]
    command += ["--path", str(path)] + (["--quick"] if args.quick else [])
    command += ["--chunks", str(args.chunks)] if args.chunks else []
    done = subprocess.run(command, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{store} {phase} failed ({done.returncode}):\n{done.stderr}")
    got: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if args.progress:
        print(json.dumps({"store": store, "phase": phase, **got}), file=sys.stderr, flush=True)
    return got


def _config() -> dict[str, Any]:
    config: dict[str, Any] = {"cpus": os.cpu_count()}
    for package in ("zarr", "xarray", "numpy", "zarrdb", "icechunk", "zarr-sqlite"):
        try:
            config[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            config[package] = None
    return config


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    stores = args.store or list(STORES)
    workloads = args.workload or list(WORKLOADS)
    skipped = {s: why for s in stores if (why := _missing(s)) is not None}
    stores = [s for s in stores if s not in skipped]
    seconds: dict[str, dict[str, list[float]]] = {s: {w: [] for w in workloads} for s in stores}
    space: dict[str, dict[str, dict[str, int]]] = {s: {} for s in stores}
    load_at_start = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="user_bench.", dir=args.tmp))
    try:
        for run in range(args.runs):
            turn = run % len(stores) if stores else 0
            for store in stores[turn:] + stores[:turn]:
                for workload in ("chunks", "to_zarr"):
                    wanted = workload in workloads or (workload == "to_zarr" and "open_load" in workloads)
                    if not wanted:
                        continue
                    where = tmp / f"{store}.{workload}"
                    shutil.rmtree(where, ignore_errors=True)
                    where.mkdir()
                    got = _run_child(workload, store, where, args)
                    if workload in workloads:
                        seconds[store][workload].append(got["seconds"])
                    space[store][workload] = {"disk_bytes": got["disk_bytes"], "stored_bytes": got["stored_bytes"]}
                    if workload == "to_zarr" and "open_load" in workloads:
                        got = _run_child("open_load", store, where, args)
                        seconds[store]["open_load"].append(got["seconds"])
                    shutil.rmtree(where)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    config = _config()
    config["load_at_start"] = load_at_start
    config["load_at_end"] = os.getloadavg()
    return {
        "config": config,
        "runs": args.runs,
        "quick": args.quick,
        "chunks": args.chunks or N_CHUNKS["quick" if args.quick else "full"],
        "stores": {s: STORES[s] for s in stores},
        "skipped": skipped,
        "seconds": {s: {w: _summary(v) for w, v in by.items()} for s, by in seconds.items()},
        "space": space,
    }


def table(report: dict[str, Any]) -> str:
    seconds, space = report["seconds"], report["space"]
    workloads = [w for w in WORKLOADS if any(w in by for by in seconds.values())]
    base = seconds.get("local", {})
    head = ["store"] + [f"{w} s (x local)" for w in workloads] + ["file / stored: chunks", "to_zarr"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for store, by in seconds.items():
        cells = [store]
        for w in workloads:
            s = by[w]
            ratio = f" ({s['median'] / base[w]['median']:.2f}x)" if w in base else ""
            cells.append(f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f}){ratio}")
        for w in ("chunks", "to_zarr"):
            got = space[store].get(w)
            cells.append(
                f"{got['disk_bytes'] / got['stored_bytes']:.3f} ({got['disk_bytes'] / 1e6:.1f} MB)" if got else "-"
            )
        lines.append("| " + " | ".join(cells) + " |")
    for store, why in report["skipped"].items():
        lines.append(f"\nskipped {store}: {why}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, 1 run (the test's mode)")
    parser.add_argument("--runs", type=int, default=None, help="runs (default 3, quick 1)")
    parser.add_argument("--store", action="append", choices=sorted(STORES))
    parser.add_argument("--workload", action="append", choices=WORKLOADS)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--tmp", default=None, help="where the stores are written")
    parser.add_argument("--chunks", type=int, default=None, help="chunks of the chunks workload")
    parser.add_argument("--progress", action="store_true", help="each child's figures on stderr")
    parser.add_argument("--child", choices=WORKLOADS, dest="phase", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        args.store = args.store[0]
        print(json.dumps(child(args)), flush=True)
        # icechunk 2.3's runtime crashes the interpreter at exit (SIGSEGV after the work is
        # done and closed): the child ends without the interpreter's teardown.
        os._exit(0)
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    report = measure(args)
    print(json.dumps(report, indent=1) if args.json else table(report))


if __name__ == "__main__":
    main()
