"""Where big_zstd reads through ZarrdbStore lose to LocalStore: the stores' own reads, without
zarr-python.

Writes the big_zstd array (``bench_arrays.py``) once through zarr-python into a zarrdb file and a
LocalStore folder, then, in fresh processes (alternated), reads every stored chunk value once
("cold": the process has read nothing yet) and again ("warm"), through the native store
(``zarrdb._native``) and as plain file reads. Prints the times; docs/benchmarks.md has the
reading of them.

    .venv/bin/python python/bench/raw_reads.py [--runs N] [--tmp DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GRID = 16  # 8192 / 512 chunks per dimension


def _prepare(base: Path) -> None:
    """Write the big_zstd array into ``base``: ``d.zarrdb`` (zarrdb) and ``l.zarr`` (LocalStore)."""
    import zarr

    import zarrdb
    from bench_arrays import bench_array
    from store_bench import WORKLOADS, _create_and_write

    workload = WORKLOADS["big_zstd"]
    data = bench_array(workload["shape"])
    for store in (zarrdb.ZarrdbStore(base / "d.zarrdb"), zarr.storage.LocalStore(base / "l.zarr")):
        _create_and_write(store, data, workload["chunks"])
        store.close()


def _child(kind: str, base: Path) -> None:
    keys = [f"c/{i}/{j}" for i in range(GRID) for j in range(GRID)]
    if kind == "zarrdb":
        from zarrdb import _native

        store = _native.Database.open(base / "d.zarrdb", False, None, None, True).store()

        def read(key: str) -> int:
            value = store.get(key)
            assert value is not None
            return len(memoryview(value))
    else:

        def read(key: str) -> int:
            return len((base / "l.zarr" / key).read_bytes())

    times = []
    for _ in range(2):
        start = time.perf_counter()
        total = sum(read(key) for key in keys)
        times.append(time.perf_counter() - start)
    print(f"{total} {times[0]} {times[1]}")


def run_child(script: str, kind: str, base: Path) -> str:
    """Run ``script --child KIND --base BASE`` in a fresh process (bounded); its standard output."""
    return subprocess.run(
        [sys.executable, script, "--child", kind, "--base", str(base)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tmp", default=None)
    parser.add_argument("--child", choices=("zarrdb", "files"), help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    if args.child:
        _child(args.child, Path(args.base))
        return
    base = Path(tempfile.mkdtemp(prefix="zarrdb-raw-reads-", dir=args.tmp))
    try:
        _prepare(base)
        results: dict[str, list[tuple[float, float]]] = {"zarrdb": [], "files": []}
        for run in range(args.runs):
            for kind in ("zarrdb", "files") if run % 2 == 0 else ("files", "zarrdb"):
                out = run_child(__file__, kind, base).split()
                results[kind].append((float(out[1]), float(out[2])))
                size_mb = int(out[0]) / 1e6
        for kind, runs in results.items():
            cold = statistics.median(r[0] for r in runs) * 1000
            warm = statistics.median(r[1] for r in runs) * 1000
            print(f"{kind:7} {size_mb:.0f} MB of chunk values: cold {cold:.0f} ms, warm {warm:.0f} ms")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
