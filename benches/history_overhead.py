"""History on against off, alternated, in one run.

    python3 benches/history_overhead.py target/release/zarrdb [--rounds 6] [--backend redb ...]
        [--workload group_commit --workload group_commit_new | --workload big_zstd ...]
        [--against OTHER_BINARY]

Each round runs `zarrdb bench --workload W... --runs 1` once per backend with and without
history (`redb` and `redb-history`, ...), the order of the two reversed every other round
(BENCHMARKS.md: compare as ratios measured in the same run), and prints the median of every
figure (commits/s of the group-commit workloads, write and read MB/s of the whole-array ones)
with the ratio of history on to off. The default workloads are `group_commit`, which rewrites
16 chunks (a database with history keeps every old value), and `group_commit_new`, which writes
a new chunk each time (both grow alike): together they tell history's bookkeeping from the
cost of keeping every version.

`--against OTHER` adds a third variant to every round: history on with another build of zarrdb
(an earlier commit, say), so a change to history's layout is measured against the one before it
and against history off in the same run. The variants take turns at each place in a round's
order (a multiple of 6 rounds gives each the same share of every place). Each figure comes with
its quartiles over the rounds: a single round of a durable workload moves by more than the budget
it is compared with.

Each workload runs in a process of its own, and `cpu_s` is the CPU time (user and system) that
process took: for a workload of fixed work (the whole-array ones) its on/off ratio is what history
adds to the work, higher being worse, and it moves far less with the machine's neighbours than
the MB/s figures do.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import tempfile

FIGURES = ("commits_per_s", "write_MBps", "read_MBps", "cpu_s")


def once(binary: str, workloads: list[str], backend: str, folder: str) -> list[dict]:
    """One `zarrdb bench` process; with one workload, its figures gain `cpu_s`, the CPU time
    (user and system) the process took, which the machine's neighbours move far less than the
    wall-clock figures."""
    args = [binary, "bench", "--backend", backend, "--runs", "1", "--json", "--dir", folder]
    for workload in workloads:
        args += ["--workload", workload]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    figures = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if len(workloads) == 1:
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        for figure in figures:
            figure["cpu_s"] = round(cpu, 3)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--backend", action="append", help="redb, lmdb, sled (default: all three)")
    parser.add_argument("--workload", action="append", help="default: group_commit, group_commit_new")
    parser.add_argument("--against", help="another zarrdb binary, run with history on in the same rounds")
    args = parser.parse_args()
    backends = args.backend or ["redb", "lmdb", "sled"]
    workloads = args.workload or ["group_commit", "group_commit_new"]
    # (workload, backend, threads, figure, variant) -> one figure per round
    seen: dict[tuple[str, str, str, str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for round_index in range(args.rounds):
            for backend in backends:
                variants = [("off", args.binary, backend), ("on", args.binary, f"{backend}-history")]
                if args.against:
                    variants.append(("against", args.against, f"{backend}-history"))
                # Every variant takes every place in the order in turn: a run after another's
                # files were removed can be slower or faster than the first of a round.
                turn = round_index % len(variants)
                order = variants[turn:] + variants[:turn]
                for name, binary, target in order if (round_index // len(variants)) % 2 == 0 else order[::-1]:
                    for f in (f for workload in workloads for f in once(binary, [workload], target, folder)):
                        for figure in FIGURES:
                            if figure in f:
                                key = (f["workload"], backend, str(f.get("threads", "")), figure, name)
                                seen.setdefault(key, []).append(f[figure])
    names = ["off", "on"] + (["against"] if args.against else [])
    header = f"{'workload':<17} {'backend':<6} {'threads':>7} {'figure':<14}"
    for name in names:
        header += f" {name + ' (quartiles)':>22}" + ("" if name == "off" else f" {name + '/off':>11}")
    print(header)
    for workload, backend, threads, figure in sorted({k[:4] for k in seen}):
        off = statistics.median(seen[(workload, backend, threads, figure, "off")])
        line = f"{workload:<17} {backend:<6} {threads:>7} {figure:<14}"
        for name in names:
            runs = seen[(workload, backend, threads, figure, name)]
            low, _, high = statistics.quantiles(runs, n=4) if len(runs) > 1 else (runs[0],) * 3
            digits = 2 if figure == "cpu_s" else 0
            line += f" {statistics.median(runs):>8.{digits}f} ({low:>5.{digits}f}-{high:<5.{digits}f})"
            if name != "off":
                line += f" {statistics.median(runs) / off:>11.2f}"
        print(line)
    print(f"(medians of {args.rounds} rounds" + (f"; against: {args.against})" if args.against else ")"))


if __name__ == "__main__":
    main()
