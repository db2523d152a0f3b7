"""Compare two or more builds (or settings) of `zarrdb bench`, alternated, in one run.

    python3 benches/ab.py BIN[@VAR=V;VAR=V] BIN2[...] --workload W [--workload W2] [--backend redb] [--rounds 6]

Each round runs `BIN bench --backend B --runs 1 --json --workload ...` once per variant, the
variants' order reversed every other round (BENCHMARKS.md: compare as ratios measured in the same
run, A and B alternated), and prints the median write and read MB/s of every workload and
variant. A variant is a binary path, optionally followed by `@` and environment settings for its
runs (`target/release/zarrdb@MIMALLOC_PURGE_DELAY=-1`). Build the binaries to compare first,
e.g. one from a `git worktree` of the older commit with its own `CARGO_TARGET_DIR`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess


def variant_env(variant: str) -> tuple[str, dict[str, str]]:
    path, _, settings = variant.partition("@")
    env = dict(os.environ)
    for setting in filter(None, settings.split(";")):
        name, _, value = setting.partition("=")
        env[name] = value
    return path, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="+", help="BIN or BIN@VAR=V;VAR=V")
    parser.add_argument("--workload", action="append", required=True)
    parser.add_argument("--backend", default="redb")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for round_index in range(args.rounds):
        order = args.variants if round_index % 2 == 0 else args.variants[::-1]
        for variant in order:
            path, env = variant_env(variant)
            command = [path, "bench", "--backend", args.backend, "--runs", "1", "--json"]
            for workload in args.workload:
                command += ["--workload", workload]
            out = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
            for figure in json.loads(out.stdout):
                key = (figure["workload"], variant)
                figures.setdefault(key, []).append((figure["write_MBps"], figure["read_MBps"]))
    for (workload, variant), runs in sorted(figures.items()):
        write = statistics.median(w for w, _ in runs)
        read = statistics.median(r for _, r in runs)
        print(f"{workload:14} {variant:50} write {write:8.1f} read {read:8.1f} MB/s  (n={len(runs)})")


if __name__ == "__main__":
    main()
