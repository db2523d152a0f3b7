#!/usr/bin/env python3
"""zarrdb against its peers on the shared whole-array workloads (issue 18), in one run.

Peers: zarrs (the crate, built here), tensorstore's zarr3 driver and zarr-python 3, each on a
directory store. Every measurement is a fresh process (`peer` from src/main.rs for zarrdb and
zarrs, py_peer.py for the Python peers); targets alternate within each run, their order rotating
from run to run. Both durabilities are compared fairly:
- durable: zarrdb's durable commits against each peer followed by an fsync of every file and
  folder it wrote, timed with the write;
- fast: zarrdb's fast commits (made durable at close, which is timed) against each peer without
  a sync.
Reads are the same in both: each target opens what it wrote and reads the whole array.

The machine's limits are measured in the same run (`peer limits`): memcpy into fresh memory
(one core and all cores) and into warm memory, zstd level 1 per core, 4 KiB write + fdatasync
per second, 64 MiB write + fdatasync MB/s.

With `--history`, the same run also measures what keeping history costs (issue 42's budget):
zarrdb with history (`redb-history`, `lmdb-history`) takes its turn among the targets of every
whole-array workload, and each run adds, in a rotated order, small durable commits with history
on and off (`zarrdb bench --workload group_commit_new --workload group_commit` on redb, LMDB and
sled, as benches/history_overhead.py runs them) and the tag, diff and version reads of a database
of 1,000,000 chunk keys (`zarrdb bench --workload history`).

Run from the repository root with the venv scripts/test.sh makes (tensorstore, zarr, numpy):

    .venv/bin/python benches/peers/run.py [--runs 3] [--workload big_zstd ...] [--history] [--json]

Prints a table of zarrdb MB/s over the best peer's MB/s (write ; read), per workload and backend,
and the figures behind it; with `--history`, tables of history on over off. Not part of the test
suite.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SHARED = Path(os.environ.get("ZARRDB_SHARED", REPO.parent / "shared")) / "bench"
WORKLOADS_FILE = SHARED / "workloads.json"
PEER_BIN = HERE / "target" / "release" / "peer"
ZARRDB = ["redb", "lmdb"]
HISTORY = [f"{backend}-history" for backend in ZARRDB]
PEERS = ["zarrs", "tensorstore", "zarr"]
CHILD_TIMEOUT_S = 900
ZARRDB_BIN = REPO / "target" / "release" / "zarrdb"
# Small durable commits with history on and off: every backend, both of history_overhead.py's workloads.
COMMIT_BACKENDS = ["redb", "lmdb", "sled"]
COMMIT_WORKLOADS = ["group_commit_new", "group_commit"]
COMMIT_ROUNDS_PER_RUN = 4
VERSION_FIGURES = (
    "tag_ms",
    "small_commit_ms",
    "diff_ms",
    "open_version_ms",
    "read_version_chunks_per_s",
    "read_head_chunks_per_s",
)

sys.path.insert(0, str(REPO / "benches"))
import history_overhead  # benches/, beside this folder


def build(history: bool) -> None:
    subprocess.run(
        ["cargo", "build", "--quiet", "--release", "--manifest-path", str(HERE / "Cargo.toml")],
        check=True,
    )
    if history:
        subprocess.run(
            ["cargo", "build", "--quiet", "--release", "--bin", "zarrdb", "--manifest-path", str(REPO / "Cargo.toml")],
            check=True,
        )


def is_zarrdb(target: str) -> bool:
    return target in ZARRDB or target in HISTORY


def measure(target: str, phase: str, workload: str, path: Path, durable: bool) -> dict:
    """One fresh process; its JSON line."""
    if target in PEERS[1:]:
        command = [sys.executable, str(HERE / "py_peer.py"), target, phase, workload, str(path)]
        command += ["--workloads", str(WORKLOADS_FILE), "--data-module", str(SHARED)]
    else:
        command = [str(PEER_BIN), target, phase, workload, str(path), "--workloads", str(WORKLOADS_FILE)]
    if phase == "write":
        if is_zarrdb(target) and not durable:
            command.append("--fast")
        if target in PEERS and durable:
            command.append("--sync")
    done = subprocess.run(command, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def limits() -> dict:
    done = subprocess.run([str(PEER_BIN), "limits"], capture_output=True, text=True, check=True, timeout=300)
    return json.loads(done.stdout.strip().splitlines()[-1])


def summary(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 1), "min": round(min(values), 1), "max": round(max(values), 1)}


def run(args: argparse.Namespace) -> dict:
    with open(WORKLOADS_FILE) as f:
        workloads = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    names = args.workload or list(workloads)
    targets = ZARRDB + (HISTORY if args.history else []) + PEERS
    base = Path(tempfile.mkdtemp(prefix="zarrdb-peers-", dir=args.tmp))
    report: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "load_before": os.getloadavg(), "runs": args.runs}
    report["limits_before"] = limits()
    results: dict = {}
    try:
        for name in names:
            mb = workloads[name]["shape"][0] * workloads[name]["shape"][1] * 4 / 1e6
            figures = {
                t: {"write_durable": [], "write_fast": [], "read": [], "write_rss_MB": [], "read_rss_MB": []}
                for t in targets
            }
            for run_index in range(args.runs):
                order = targets[run_index % len(targets) :] + targets[: run_index % len(targets)]
                for target in order:
                    for durable in (True, False):
                        path = base / f"{name}-{target}-{run_index}-{'durable' if durable else 'fast'}"
                        path.mkdir()
                        try:
                            written = measure(target, "write", name, path, durable)
                            figures[target]["write_durable" if durable else "write_fast"].append(mb / written["seconds"])
                            figures[target]["write_rss_MB"].append(written["overhead_rss_bytes"] / 1e6)
                            if durable:
                                read = measure(target, "read", name, path, durable)
                                figures[target]["read"].append(mb / read["seconds"])
                                figures[target]["read_rss_MB"].append(read["overhead_rss_bytes"] / 1e6)
                        finally:
                            shutil.rmtree(path, ignore_errors=True)
                print(f"{name}: run {run_index + 1} of {args.runs} done", file=sys.stderr, flush=True)
            results[name] = {t: {k: summary(v) for k, v in f.items()} for t, f in figures.items()}
        if args.history:
            report["history"] = history_runs(args.runs, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    report["limits_after"] = limits()
    report["load_after"] = os.getloadavg()
    report["workloads"] = results
    return report


def history_runs(runs: int, base: Path) -> dict:
    """Small durable commits with history on and off (`COMMIT_ROUNDS_PER_RUN` rounds a run, in a
    rotated order), and tag, diff and version reads (once a run); each figure's values."""
    commits: dict = {}
    versions: dict = {}
    variants = [(backend, history) for backend in COMMIT_BACKENDS for history in (False, True)]
    for run_index in range(runs):
        # A single round of durable commits moves by more than the budget: several per run, each
        # variant taking every place in the order in turn.
        for round_index in range(run_index * COMMIT_ROUNDS_PER_RUN, (run_index + 1) * COMMIT_ROUNDS_PER_RUN):
            turn = round_index % len(variants)
            order = variants[turn:] + variants[:turn]
            for backend, history in order if (round_index // len(variants)) % 2 == 0 else order[::-1]:
                folder = base / f"commits-{backend}-{history}-{round_index}"
                folder.mkdir()
                try:
                    target = f"{backend}-history" if history else backend
                    for f in history_overhead.once(str(ZARRDB_BIN), COMMIT_WORKLOADS, target, str(folder)):
                        key = f"{f['workload']} {backend} {f['threads']}"
                        side = "on" if history else "off"
                        commits.setdefault(key, {"off": [], "on": []})[side].append(f["commits_per_s"])
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
        for backend in COMMIT_BACKENDS:
            folder = base / f"versions-{backend}-{run_index}"
            folder.mkdir()
            try:
                for f in history_overhead.once(str(ZARRDB_BIN), ["history"], backend, str(folder)):
                    for figure in VERSION_FIGURES:
                        versions.setdefault(backend, {}).setdefault(figure, []).append(f[figure])
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        print(f"history: run {run_index + 1} of {runs} done", file=sys.stderr, flush=True)
    return {
        "commits": {k: {side: summary(v) for side, v in f.items()} for k, f in commits.items()},
        "versions": {b: {k: summary(v) for k, v in f.items()} for b, f in versions.items()},
    }


def history_ratios(report: dict) -> list[str]:
    """History on over off: whole arrays (from the peer rounds), small commits, and version reads."""
    lines = [
        "| workload | backend | durable write, on/off | fast write, on/off | read, on/off |",
        "|---|---|---|---|---|",
    ]
    for name, figures in report["workloads"].items():
        for backend in ZARRDB:
            on, off = figures[f"{backend}-history"], figures[backend]
            cells = [
                f"{on[key]['median'] / off[key]['median']:.2f} ({on[key]['median']} / {off[key]['median']})"
                for key in ("write_durable", "write_fast", "read")
            ]
            lines.append(f"| {name} | {backend} | " + " | ".join(cells) + " |")
    lines += ["", "| commits | backend | threads | off | on | on/off |", "|---|---|---|---|---|---|"]
    for key, f in sorted(report["history"]["commits"].items()):
        workload, backend, threads = key.split()
        off, on = f["off"], f["on"]
        lines.append(
            f"| {workload} | {backend} | {threads} | {off['median']} ({off['min']}-{off['max']}) "
            f"| {on['median']} ({on['min']}-{on['max']}) | {on['median'] / off['median']:.2f} |"
        )
    lines += [
        "",
        "| versions (1,000,000 chunk keys) | tag ms | a small commit without history, ms | diff ms "
        "| open version ms | read version / head |",
        "|---|---|---|---|---|---|",
    ]
    for backend, f in sorted(report["history"]["versions"].items()):
        ratio = f["read_version_chunks_per_s"]["median"] / f["read_head_chunks_per_s"]["median"]
        lines.append(
            f"| {backend} | {f['tag_ms']['median']} | {f['small_commit_ms']['median']} | {f['diff_ms']['median']} "
            f"| {f['open_version_ms']['median']} | {ratio:.2f} |"
        )
    return lines


def ratios(report: dict) -> list[str]:
    lines = [
        "| workload | backend | durable write / best peer (synced) | fast write / best peer (unsynced) | read / best peer |",
        "|---|---|---|---|---|",
    ]
    for name, figures in report["workloads"].items():
        best = {
            key: max(PEERS, key=lambda p: figures[p][key]["median"]) for key in ("write_durable", "write_fast", "read")
        }
        for backend in ZARRDB:
            cells = []
            for key in ("write_durable", "write_fast", "read"):
                ours, theirs = figures[backend][key]["median"], figures[best[key]][key]["median"]
                cells.append(f"{ours / theirs:.2f}× ({ours} vs {best[key]} {theirs})")
            lines.append(f"| {name} | {backend} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workload", action="append", choices=["big_zstd", "big_raw", "small_chunks", "sharded"])
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    parser.add_argument("--tmp", help="folder for the stores (default: the temp dir)")
    parser.add_argument("--history", action="store_true", help="also measure history on against off (issue 42)")
    args = parser.parse_args()
    build(args.history)
    report = run(args)
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"started {report['started']}, {args.runs} runs, load {report['load_before']} -> {report['load_after']}")
    print("limits:", json.dumps(report["limits_before"]), json.dumps(report["limits_after"]))
    print("\n".join(ratios(report)))
    if args.history:
        print("\n".join(history_ratios(report)))
    for name, figures in report["workloads"].items():
        for target, f in figures.items():
            print(f"{name:13} {target:12} " + "  ".join(f"{k} {v['median']} ({v['min']}-{v['max']})" for k, v in f.items()))


if __name__ == "__main__":
    main()
