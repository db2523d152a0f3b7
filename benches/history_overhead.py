"""History on against off for small durable commits, alternated, in one run.

    python3 benches/history_overhead.py target/release/zarrdb [--rounds 6] [--backend redb ...]

Each round runs `zarrdb bench --workload group_commit --workload group_commit_new --runs 1`
once per backend with and without history (`redb` and `redb-history`, ...), the order of the
two reversed every other round (BENCHMARKS.md: compare as ratios measured in the same run),
and prints the median commits/s of every workload, thread count and backend, with the ratio of
history on to off. `group_commit` rewrites 16 chunks (a database with history keeps every old
value); `group_commit_new` writes a new chunk each time (both grow alike), so the two together
tell history's bookkeeping from the cost of keeping every version.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile


def once(binary: str, backend: str, folder: str) -> list[dict]:
    args = [binary, "bench", "--workload", "group_commit", "--workload", "group_commit_new"]
    args += ["--backend", backend, "--runs", "1", "--json", "--dir", folder]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--backend", action="append", help="redb, lmdb, sled (default: all three)")
    args = parser.parse_args()
    backends = args.backend or ["redb", "lmdb", "sled"]
    seen: dict[tuple[str, str, int], list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for round_index in range(args.rounds):
            for backend in backends:
                pair = [backend, f"{backend}-history"]
                for variant in pair if round_index % 2 == 0 else pair[::-1]:
                    for f in once(args.binary, variant, folder):
                        key = (f["workload"], f["backend"], f["threads"])
                        seen.setdefault(key, []).append(f["commits_per_s"])
    print(f"{'workload':<17} {'backend':<6} {'threads':>7} {'off':>8} {'on':>8} {'on/off':>7}  (median commits/s of {args.rounds})")
    for (workload, backend, threads), runs in sorted(seen.items()):
        if backend.endswith("-history"):
            continue
        off = statistics.median(runs)
        on = statistics.median(seen[(workload, f"{backend}-history", threads)])
        print(f"{workload:<17} {backend:<6} {threads:>7} {off:>8.0f} {on:>8.0f} {on / off:>7.2f}")


if __name__ == "__main__":
    main()
