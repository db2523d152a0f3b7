"""History on against off, alternated, in one run.

    python3 benches/history_overhead.py target/release/zarrdb [--rounds 6] [--backend redb ...]
        [--workload group_commit --workload group_commit_new | --workload big_zstd ...]

Each round runs `zarrdb bench --workload W... --runs 1` once per backend with and without
history (`redb` and `redb-history`, ...), the order of the two reversed every other round
(BENCHMARKS.md: compare as ratios measured in the same run), and prints the median of every
figure (commits/s of the group-commit workloads, write and read MB/s of the whole-array ones)
with the ratio of history on to off. The default workloads are `group_commit`, which rewrites
16 chunks (a database with history keeps every old value), and `group_commit_new`, which writes
a new chunk each time (both grow alike): together they tell history's bookkeeping from the
cost of keeping every version.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile

FIGURES = ("commits_per_s", "write_MBps", "read_MBps")


def once(binary: str, workloads: list[str], backend: str, folder: str) -> list[dict]:
    args = [binary, "bench", "--backend", backend, "--runs", "1", "--json", "--dir", folder]
    for workload in workloads:
        args += ["--workload", workload]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--backend", action="append", help="redb, lmdb, sled (default: all three)")
    parser.add_argument("--workload", action="append", help="default: group_commit, group_commit_new")
    args = parser.parse_args()
    backends = args.backend or ["redb", "lmdb", "sled"]
    workloads = args.workload or ["group_commit", "group_commit_new"]
    seen: dict[tuple[str, str, str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for round_index in range(args.rounds):
            for backend in backends:
                pair = [backend, f"{backend}-history"]
                for variant in pair if round_index % 2 == 0 else pair[::-1]:
                    for f in once(args.binary, workloads, variant, folder):
                        for figure in FIGURES:
                            if figure in f:
                                key = (f["workload"], f["backend"], str(f.get("threads", "")), figure)
                                seen.setdefault(key, []).append(f[figure])
    print(f"{'workload':<17} {'backend':<6} {'threads':>7} {'figure':<14} {'off':>8} {'on':>8} {'on/off':>7}")
    for (workload, backend, threads, figure), runs in sorted(seen.items()):
        if backend.endswith("-history"):
            continue
        off = statistics.median(runs)
        on = statistics.median(seen[(workload, f"{backend}-history", threads, figure)])
        print(f"{workload:<17} {backend:<6} {threads:>7} {figure:<14} {off:>8.0f} {on:>8.0f} {on / off:>7.2f}")
    print(f"(medians of {args.rounds} rounds)")


if __name__ == "__main__":
    main()
