"""The cost of the no-lost-update guarantee for zarr-python partial-chunk writes (issue 15, item 5).

Runs the scenario of ``python/tests/test_concurrent_partial_writes.py`` (one (256, 256) int32
array in (32, 32) zstd chunks; writer w reads and rewrites the columns w::W, so each write is a
read-modify-write of all 64 chunks) with 1 thread, 8 threads, and 8 threads + 4 processes, each
round in ``store.transaction()``, and prints writes (transactions) per second. The same runs
without transactions (plain ``arr[...] = v``) show what the guarantee costs and what it prevents
(their lost updates). A one-off measurement, not a test:

    .venv/bin/python python/bench/concurrent_partial_writes.py [--backend redb|lmdb] [--rounds N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _partial_writer import run_scenario  # noqa: E402

CONFIGS = [("1 thread", 1, 0), ("8 threads", 8, 0), ("8 threads + 4 processes", 8, 4)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="redb", choices=["redb", "lmdb"])
    parser.add_argument("--rounds", type=int, default=10, help="writes per writer")
    args = parser.parse_args()
    print(f"backend {args.backend}, {args.rounds} rounds per writer")
    print(f"{'writers':<26}{'mode':<13}{'writes':>7}{'seconds':>9}{'writes/s':>10}  lost-update reports")
    for mode in ("transaction", "plain"):
        for name, threads, processes in CONFIGS:
            with tempfile.TemporaryDirectory() as folder:
                path = str(Path(folder) / f"bench.{args.backend}")
                outcome = run_scenario(
                    path, args.backend, mode, threads, processes, args.rounds  # type: ignore[arg-type]
                )
            rate = outcome.writes / outcome.seconds
            print(
                f"{name:<26}{mode:<13}{outcome.writes:>7}{outcome.seconds:>9.2f}{rate:>10.1f}"
                f"  {len(outcome.problems)}"
            )


if __name__ == "__main__":
    main()
