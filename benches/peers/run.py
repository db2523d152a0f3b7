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

Run from the repository root with the venv scripts/test.sh makes (tensorstore, zarr, numpy):

    .venv/bin/python benches/peers/run.py [--runs 3] [--workload big_zstd ...] [--json]

Prints a table of zarrdb MB/s over the best peer's MB/s (write ; read), per workload and backend,
and the figures behind it. Not part of the test suite.
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
PEERS = ["zarrs", "tensorstore", "zarr"]
CHILD_TIMEOUT_S = 900


def build() -> None:
    subprocess.run(
        ["cargo", "build", "--quiet", "--release", "--manifest-path", str(HERE / "Cargo.toml")],
        check=True,
    )


def measure(target: str, phase: str, workload: str, path: Path, durable: bool) -> dict:
    """One fresh process; its JSON line."""
    if target in PEERS[1:]:
        command = [sys.executable, str(HERE / "py_peer.py"), target, phase, workload, str(path)]
        command += ["--workloads", str(WORKLOADS_FILE), "--data-module", str(SHARED)]
    else:
        command = [str(PEER_BIN), target, phase, workload, str(path), "--workloads", str(WORKLOADS_FILE)]
    if phase == "write":
        if target in ZARRDB and not durable:
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
    targets = ZARRDB + PEERS
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
    finally:
        shutil.rmtree(base, ignore_errors=True)
    report["limits_after"] = limits()
    report["load_after"] = os.getloadavg()
    report["workloads"] = results
    return report


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
    args = parser.parse_args()
    build()
    report = run(args)
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"started {report['started']}, {args.runs} runs, load {report['load_before']} -> {report['load_after']}")
    print("limits:", json.dumps(report["limits_before"]), json.dumps(report["limits_after"]))
    print("\n".join(ratios(report)))
    for name, figures in report["workloads"].items():
        for target, f in figures.items():
            print(f"{name:13} {target:12} " + "  ".join(f"{k} {v['median']} ({v['min']}-{v['max']})" for k, v in f.items()))


if __name__ == "__main__":
    main()
