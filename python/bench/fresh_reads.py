#!/usr/bin/env python3
"""zarr-python reading big_zstd whole in fresh processes: one written copy per store, many reads.

``store_bench.py`` writes before every read, so a read figure there carries the machine's state
after a write (writeback, freed memory). This bench writes the big_zstd array once into a zarrdb
file and a LocalStore folder and then reads it whole, each read in a fresh process, the variants
alternated for ``--runs`` rounds. It compares read settings of ``ZarrdbStore``:

- ``zarrdb``: the defaults;
- ``zarrdb_cache1g``: ``cache_size=1 GiB`` (redb's own default cache size);
- ``zarrdb_lookup``: a size lookup before every read (no per-folder size guess, ``_placement``);
- ``local``: ``LocalStore`` on the same disk.

The first zarrdb read of a round after LocalStore's ran slower in every round measured (about a
quarter), so each round starts with an untimed zarrdb read. Times cover opening the store and
the array and ``arr[:]``; the bytes are checked (untimed). Figures: MB/s, median (min-max).

    .venv/bin/python python/bench/fresh_reads.py [--runs N] [--variant NAME ...] [--tmp DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VARIANTS = ("zarrdb", "zarrdb_cache1g", "zarrdb_lookup", "local")
SHAPE = (8192, 8192)  # big_zstd, as raw_reads.py writes it


def _open(variant: str, base: Path) -> Any:
    if variant == "local":
        from zarr.storage import LocalStore

        return LocalStore(base / "l.zarr", read_only=True)
    import zarrdb
    import zarrdb._placement

    if variant == "zarrdb_lookup":
        # Never remember a size, so every whole read asks the engine first.
        zarrdb._placement.ReadPlacement.learn = lambda *args: None  # type: ignore[method-assign]
    cache = 1 << 30 if variant == "zarrdb_cache1g" else None
    return zarrdb.ZarrdbStore(base / "d.zarrdb", read_only=True, cache_size=cache)


def _child(variant: str, base: Path) -> None:
    import zarr

    from bench_arrays import bench_array

    start = time.perf_counter()
    arr = zarr.open_array(_open(variant, base), mode="r")
    got = arr[:]
    elapsed = time.perf_counter() - start
    if got.tobytes() != bench_array(SHAPE).tobytes():
        raise SystemExit(f"{variant} read other bytes than were written")
    print(json.dumps({"seconds": elapsed, "bytes": got.nbytes}))


def _read(variant: str, base: Path) -> float:
    from raw_reads import run_child

    figures = json.loads(run_child(__file__, variant, base))
    return figures["bytes"] / figures["seconds"] / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--variant", action="append", choices=VARIANTS)
    parser.add_argument("--tmp", default=None)
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    if args.child:
        _child(args.child, Path(args.base))
        return
    variants = args.variant or list(VARIANTS)
    base = Path(tempfile.mkdtemp(prefix="zarrdb-fresh-reads-", dir=args.tmp))
    try:
        from raw_reads import _prepare  # the same two stores, written the same way

        _prepare(base)
        figures: dict[str, list[float]] = {v: [] for v in variants}
        for run in range(args.runs):
            _read("zarrdb", base)  # untimed: see the docstring
            order = variants[run % len(variants) :] + variants[: run % len(variants)]
            for variant in order:
                figures[variant].append(_read(variant, base))
        for variant, rates in figures.items():
            print(
                f"{variant:15} {statistics.median(rates):6.1f} MB/s "
                f"({min(rates):.1f}-{max(rates):.1f}), {len(rates)} reads"
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
