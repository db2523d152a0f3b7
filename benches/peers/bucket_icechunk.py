#!/usr/bin/env python3
"""Bucket databases against icechunk 2.3 on one SeaweedFS server, same data, same run (issue 43,
acceptance 5).

The script starts one SeaweedFS server (`weed server`, master, volume, filer and S3 in one process,
on 127.0.0.1 only, bounded by `timeout`, stopped by its PID at the end), makes one bucket, and
measures, each workload in a fresh prefix of that bucket:

- `server`: the server's own limits, at the start and again at the end: one 4 KiB PUT and one GET
  after another (medians of 50), and 4 KiB PUTs and GETs with 32 in flight (object_store's client,
  through the zarrdb bench binary).
- `latency`: one small-change commit (a 4 KiB chunk of a `uint8` array), one after another:
  zarrdb a region write on the database (begin, write, commit); icechunk `writable_session`,
  `zarr.open_array`, the assignment, `commit`. Median of `--latency-commits`.
- `writers`: commits/s with 1, 4 and 16 writers for `--seconds` each, each writer committing its
  own 4 KiB chunk (1,024 `uint32` set to its count of commits) of one array again and again.
  zarrdb: a thread per writer, each with its own `Database` handle (its own engine and client, as
  a process has); a commit that lost the race on `head` is rebased by the engine. icechunk: a
  process per writer; a commit refused with `ConflictError` is made again in a fresh session
  (`retry`), and, as a second icechunk column, `commit(rebase_with=icechunk.ConflictDetector())`
  (`rebase`, icechunk's own rebase, which merges commits to other chunks). Afterwards both are
  checked: the commits reported equal the commits in the store (zarrdb: how far the head's commit
  number moved; icechunk: the commits in `main`'s ancestry), and each writer's chunk holds its
  last count.
- `arrays`: one commit creating a plate-shaped hierarchy of `--arrays` arrays (rows, wells, fields,
  5 resolution levels, as the OME-Zarr plate of earth-mover/icechunk#2348, whose commit of 5,760
  arrays took over 10 minutes), each `uint8` (4096,) with its one 4 KiB chunk written. Timed:
  the whole (staging and commit) and the commit call alone.
- `small_chunks`: an array of `--small-chunks` chunks of 4 KiB written whole in one commit, then
  read whole from a fresh handle; `whole_array`: `--whole-mib` MiB in 8 MiB chunks, the same.
- `gc`: history on (zarrdb `history(true)`; icechunk keeps history always): `--gc-chunks` chunks of
  4 KiB filled, then `--versions` commits each rewriting a tenth of them; then every version but
  the latest expired and the garbage collected, each step timed, objects under the prefix counted
  between the steps. zarrdb: `Database::expire(main)` (one small history record), `collect()`
  (deletes from the database the values only expired versions read: one commit),
  `compact_older_than(0)` (deletes the bucket's objects no live commit reaches, whatever their
  age; commits in flight are fenced off), after the same 1.1 s pause as icechunk's. icechunk: `expire_snapshots(older_than=now)`,
  `garbage_collect(delete_object_older_than=now)`, `now` taken 1.1 s after the last commit
  (Last-Modified has whole seconds; with a cut-off taken at once, icechunk deleted nothing in a
  small trial).

The data is the same on both sides: every array is 1-D, no compression (zarrdb's `bytes` codec;
zarr-python's `compressors=None`), fill value 0; bytes from `pattern` (the same formula as
benches/bucket_commits.rs). zarrdb's side is the Rust bench `benches/bucket_commits.rs` (the
engine with no Python in between); icechunk's is its Python package through
zarr-python 3.4, so its figures include zarr-python's work, as its users' do. icechunk's
repository configuration is its default (chunks of 512 bytes or less inline in manifests, so
every 4 KiB chunk is an object of its own). `latency`, `small_chunks`, `whole_array` and `gc` run
`--runs` times (3) and report the median of each figure; `writers` and `arrays` run once; the side
that goes first alternates from run to run. Around the first run of every workload the server's
request counters (SeaweedFS's Prometheus metrics) are read, so the requests each side made are
reported beside its time. icechunk's writer processes wait for one start time after their imports;
`latest_start_s` says how late the slowest was ready.

icechunk 2.3's runtime can end the interpreter with SIGSEGV at exit after the work is done: every
icechunk measurement runs in a child process that prints one JSON line, and a child that printed
its result counts as a success (its exit is reported).

Setup, outside the repository (never commit a venv):

    ~/.pyenv/versions/3.12.1/bin/python -m venv /tmp/icechunk-venv
    /tmp/icechunk-venv/bin/pip install icechunk==2.3.0 zarr==3.4.2 numpy

Run from the repository root (SeaweedFS from the repository's `.venv`, as scripts/test.sh installs
it; the zarrdb side is built with `cargo bench --no-run` first):

    /tmp/icechunk-venv/bin/python benches/peers/bucket_icechunk.py [--json] \
        [--arrays 5760] [--small-chunks 16384] [--whole-mib 256] [--versions 100] \
        [--gc-chunks 1000] [--seconds 10] [--writers 1,4,16] [--latency-commits 50] \
        [--runs 3] [--only latency,writers,...] [--icechunk-modes retry,rebase] [--weed PATH]

(`CARGO_TARGET_DIR` is honoured when the script finds the bench binary; `--zarrdb-bench PATH`
names it instead.)

Prints a table (with `--json`: the table on stderr, the JSON document on stdout).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve()
REPO = SCRIPT.parents[2]
BUCKET = "bench"
CHILD_TIMEOUT_S = 3600
WORKLOADS = ["latency", "writers", "arrays", "small_chunks", "whole_array", "gc"]
# Run `--runs` times each (alternating which side goes first); the others once.
REPEATED = {"latency", "small_chunks", "whole_array", "gc"}
EXITS: list[dict] = []


# -- data ------------------------------------------------------------------------------------


def pattern(seed: int, first: int, length: int) -> np.ndarray:
    """The bytes of bucket_commits.rs's `pattern`: ((i + seed * 7919) * 2654435761 mod 2^64) >> 13."""
    i = np.arange(first, first + length, dtype=np.uint64)
    with np.errstate(over="ignore"):
        v = (i + np.uint64(seed) * np.uint64(7919)) * np.uint64(2_654_435_761)
    return (v >> np.uint64(13)).astype(np.uint8)


def plate_path(i: int) -> tuple[str, str, str, str]:
    """bucket_commits.rs's `plate_path`: /r{row}/c{col}/f{field}/{level}."""
    level, field, col, row = i % 5, (i // 5) % 12, (i // 60) % 12, i // 720
    r = f"r{row}"
    c = f"{r}/c{col}"
    f = f"{c}/f{field}"
    return r, c, f, f"{f}/{level}"


# -- the server --------------------------------------------------------------------------------


def free_port() -> int:
    """A free port whose +10000 (SeaweedFS's gRPC port for it) is free too."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 > 65535:
            continue
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port + 10000))
            return port
        except OSError:
            continue


class Server:
    """One `weed server` on 127.0.0.1, under `timeout`, stopped by its PID."""

    def __init__(self, weed: str, seconds: int):
        self.dir = Path(tempfile.mkdtemp(prefix="bucket-ice-weed-"))
        self.s3, self.metrics = free_port(), free_port()
        master, volume, filer = free_port(), free_port(), free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self.log = open(self.dir / "weed.log", "wb")
        self.proc = subprocess.Popen(
            ["timeout", str(seconds), weed, "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
             f"-dir={self.dir}", f"-master.port={master}", f"-volume.port={volume}",
             f"-filer.port={filer}", "-s3", f"-s3.port={self.s3}", "-s3.port.iceberg=0",
             "-s3.port.lance=0", "-master.telemetry=false", f"-metricsPort={self.metrics}"],
            env=env, stdout=subprocess.DEVNULL, stderr=self.log,
        )
        deadline = time.time() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"weed exited {self.proc.returncode}; log {self.dir / 'weed.log'}")
            if self.http("PUT", f"/{BUCKET}") in (200, 409) and self.http("PUT", f"/{BUCKET}/probe", b"1") == 200:
                break
            if time.time() > deadline:
                raise RuntimeError("SeaweedFS took no write within 120 s")
            time.sleep(0.5)
        self.version = subprocess.run([weed, "version"], capture_output=True, text=True).stdout.strip()

    def http(self, method: str, path: str, body: bytes = b"") -> int | None:
        request = urllib.request.Request(f"http://127.0.0.1:{self.s3}{path}", data=body or None, method=method)
        try:
            with urllib.request.urlopen(request, timeout=5) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            return None

    def env(self) -> dict:
        return {
            **os.environ,
            "AWS_ENDPOINT": f"http://127.0.0.1:{self.s3}", "AWS_ALLOW_HTTP": "true",
            "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "any", "AWS_SECRET_ACCESS_KEY": "any",
        }

    def requests(self) -> dict[str, float]:
        """The server's S3 request counters by request type (SeaweedFS_s3_request_total)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics}/metrics", timeout=5) as r:
                text = r.read().decode()
        except OSError:
            return {}
        out: dict[str, float] = {}
        for line in text.splitlines():
            if line.startswith("SeaweedFS_s3_request_total{"):
                kind = re.search(r'type="([^"]*)"', line)
                code = re.search(r'code="([^"]*)"', line)
                name = (kind.group(1) if kind else "?") + ("" if not code or code.group(1).startswith("2") else f"/{code.group(1)}")
                out[name] = out.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def merged(runs: list[dict]) -> dict:
    """Several runs of one workload: the median of each number (the first run's counts and
    other fields), with every run's numbers kept under `runs`."""
    out = dict(runs[0])
    for key, value in runs[0].items():
        if isinstance(value, float):
            out[key] = statistics.median(r[key] for r in runs)
    out["n"] = len(runs)
    out["runs"] = [{k: v for k, v in r.items() if isinstance(v, float)} for r in runs]
    return out


def delta(after: dict, before: dict) -> dict:
    return {k: int(v - before.get(k, 0)) for k, v in sorted(after.items()) if v - before.get(k, 0) > 0}


# -- zarrdb's side: the Rust bench binary ------------------------------------------------------


def bench_binary() -> str:
    out = subprocess.run(
        ["cargo", "bench", "--bench", "bucket_commits", "--no-run", "--message-format=json"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "bucket_commits":
            if msg.get("executable"):
                return msg["executable"]
    raise RuntimeError("cargo built no bucket_commits bench")


def zarrdb(binary: str, server: Server, args: list[str]) -> dict:
    proc = subprocess.run(
        [binary, f"s3://{BUCKET}", "--json", *args], env=server.env(), capture_output=True, text=True,
        timeout=CHILD_TIMEOUT_S,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"bucket_commits {args} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    progress("zarrdb: " + proc.stderr.strip())
    return json.loads(proc.stdout.strip().splitlines()[-1])


def count_objects(binary: str, env: dict, prefix: str) -> dict:
    out = subprocess.run([binary, "--count", f"s3://{BUCKET}/{prefix}"], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


# -- icechunk's side: children -----------------------------------------------------------------


def fresh(name: str) -> str:
    return f"icechunk-{name}-{time.time_ns()}"


def repository(spec: dict, create: bool):
    import icechunk

    storage = icechunk.s3_storage(
        bucket=BUCKET, prefix=spec["prefix"], region="us-east-1", endpoint_url=spec["endpoint"],
        allow_http=True, access_key_id="any", secret_access_key="any", force_path_style=True,
    )
    return icechunk.Repository.create(storage) if create else icechunk.Repository.open(storage)


def child_latency(spec: dict) -> dict:
    import zarr

    repo = repository(spec, create=True)
    s = repo.writable_session("main")
    zarr.create_array(s.store, name="a", shape=(4096 * 64,), chunks=(4096,), dtype="uint8", compressors=None, fill_value=0)
    s.commit("create")
    times = []
    for i in range(spec["commits"]):
        began = time.perf_counter()
        s = repo.writable_session("main")
        a = zarr.open_array(s.store, path="a")
        a[(i % 64) * 4096 : (i % 64 + 1) * 4096] = np.full(4096, i % 256, dtype=np.uint8)
        s.commit(f"c{i}")
        times.append((time.perf_counter() - began) * 1e3)
    return {"ms": statistics.median(times), "samples": times}


def child_writers_setup(spec: dict) -> dict:
    import zarr

    repo = repository(spec, create=True)
    s = repo.writable_session("main")
    n = spec["writers"]
    zarr.create_array(s.store, name="a", shape=(1024 * n,), chunks=(1024,), dtype="uint32", compressors=None, fill_value=0)
    s.commit("create")
    return {}


def child_writer(spec: dict) -> dict:
    import icechunk
    import zarr

    repo = repository(spec, create=False)
    me = spec["writer"]
    ok, conflicts, errors = 0, 0, {}
    ready_at = time.time()  # after the imports and the open: later than start_at means a late start
    while time.time() < spec["start_at"]:
        time.sleep(0.001)
    deadline = spec["start_at"] + spec["seconds"]
    while time.time() < deadline:
        while True:
            try:
                s = repo.writable_session("main")
                a = zarr.open_array(s.store, path="a")
                a[me * 1024 : (me + 1) * 1024] = np.full(1024, ok + 1, dtype=np.uint32)
                if spec["mode"] == "rebase":
                    s.commit(f"w{me}-{ok}", rebase_with=icechunk.ConflictDetector())
                else:
                    s.commit(f"w{me}-{ok}")
                ok += 1
                break
            except Exception as e:  # counted by type, then made again in a fresh session
                kind = type(e).__name__
                if kind == "ConflictError":
                    conflicts += 1
                else:
                    errors[kind] = errors.get(kind, 0) + 1
                    errors.setdefault("first_" + kind, str(e)[:300])
                if errors.get(kind, 0) > 1000:
                    raise
    return {"ok": ok, "conflicts": conflicts, "errors": errors, "finished_at": time.time(),
            "late_s": max(0.0, ready_at - spec["start_at"])}


def child_writers_verify(spec: dict) -> dict:
    import zarr

    repo = repository(spec, create=False)
    messages = [s.message for s in repo.ancestry(branch="main")]
    cells = zarr.open_array(repo.readonly_session(branch="main").store, path="a", mode="r")[:]
    last = [int(cells[w * 1024]) for w in range(spec["writers"])]
    uniform = all(bool(np.all(cells[w * 1024 : (w + 1) * 1024] == last[w])) for w in range(spec["writers"]))
    return {"commits_in_history": sum(1 for m in messages if m.startswith("w")), "last": last, "uniform": uniform}


def child_arrays(spec: dict) -> dict:
    import zarr

    repo = repository(spec, create=True)
    began = time.perf_counter()
    s = repo.writable_session("main")
    store = s.store
    zarr.create_group(store)
    groups = set()
    for i in range(spec["arrays"]):
        r, c, f, a = plate_path(i)
        for g in (r, c, f):
            if g not in groups:
                groups.add(g)
                zarr.create_group(store, path=g)
        array = zarr.create_array(store, name=a, shape=(4096,), chunks=(4096,), dtype="uint8", compressors=None, fill_value=0)
        array[:] = pattern(i, 0, 4096)
    staged = time.perf_counter() - began
    committing = time.perf_counter()
    s.commit(f"{spec['arrays']} arrays")
    commit_s = time.perf_counter() - committing
    total_s = time.perf_counter() - began
    check = repo.readonly_session(branch="main").store
    for i in (0, spec["arrays"] // 2, spec["arrays"] - 1):
        got = zarr.open_array(check, path=plate_path(i)[3], mode="r")[:]
        assert np.array_equal(got, pattern(i, 0, 4096)), f"array {i} reads back wrong"
    return {"arrays": spec["arrays"], "groups": len(groups) + 1, "total_s": total_s, "stage_s": staged, "commit_s": commit_s}


def child_transfer(spec: dict) -> dict:
    import zarr

    length, chunk = spec["bytes"], spec["chunk"]
    data = pattern(1, 0, length)
    repo = repository(spec, create=True)
    began = time.perf_counter()
    s = repo.writable_session("main")
    a = zarr.create_array(s.store, name="a", shape=(length,), chunks=(chunk,), dtype="uint8", compressors=None, fill_value=0)
    a[:] = data
    s.commit("write")
    write = time.perf_counter() - began
    del repo, s, a
    repo = repository(spec, create=False)  # a fresh handle: nothing the write cached serves the read
    began = time.perf_counter()
    got = zarr.open_array(repo.readonly_session(branch="main").store, path="a", mode="r")[:]
    read = time.perf_counter() - began
    assert np.array_equal(got, data), "read back differs"
    mb = length / 1e6
    return {"chunks": length // chunk, "chunk_bytes": chunk, "bytes": length, "write_s": write, "read_s": read,
            "write_MBps": mb / write, "read_MBps": mb / read}


def child_gc(spec: dict) -> dict:
    import zarr

    chunks, versions = spec["gc_chunks"], spec["versions"]
    length = chunks * 4096
    env = {**os.environ, **spec["aws"]}
    counted = lambda: count_objects(spec["binary"], env, spec["prefix"])  # noqa: E731
    repo = repository(spec, create=True)
    s = repo.writable_session("main")
    expected = pattern(0, 0, length)
    zarr.create_array(s.store, name="a", shape=(length,), chunks=(4096,), dtype="uint8", compressors=None, fill_value=0)[:] = expected
    s.commit("fill")
    block = max(1, chunks // 10) * 4096
    began = time.perf_counter()
    for j in range(1, versions + 1):
        first = min(((j - 1) % 10) * block, length - block)
        data = pattern(j, first, block)
        s = repo.writable_session("main")
        zarr.open_array(s.store, path="a")[first : first + block] = data
        s.commit(f"rewrite {j}")
        expected[first : first + block] = data
    commits_s = time.perf_counter() - began
    versions_before = len(list(repo.ancestry(branch="main")))
    del repo
    repo = repository(spec, create=False)
    before = counted()
    # Objects' Last-Modified has whole seconds: a cut-off taken at once would spare the newest
    # commits' objects (and with them, found here, every object).
    time.sleep(1.1)
    now = datetime.datetime.now(datetime.timezone.utc)
    began = time.perf_counter()
    expired = repo.expire_snapshots(older_than=now)
    expire_s = time.perf_counter() - began
    after_expire = counted()
    began = time.perf_counter()
    summary = repo.garbage_collect(delete_object_older_than=now)
    gc_s = time.perf_counter() - began
    after = counted()
    versions_after = len(list(repo.ancestry(branch="main")))
    got = zarr.open_array(repo.readonly_session(branch="main").store, path="a", mode="r")[:]
    assert np.array_equal(got, expected), "the head does not read as written after GC"
    fields = ("bytes_deleted", "chunks_deleted", "manifests_deleted", "snapshots_deleted", "attributes_deleted",
              "transaction_logs_deleted")
    return {
        "chunks": chunks, "versions": versions, "commits_s": commits_s, "versions_before": versions_before,
        "versions_after": versions_after, "expired": len(expired), "expire_ms": expire_s * 1e3, "gc_ms": gc_s * 1e3,
        "summary": {k: getattr(summary, k) for k in fields if hasattr(summary, k)},
        "objects_before": before["objects"], "bytes_before": before["bytes"],
        "objects_after_expire": after_expire["objects"], "bytes_after_expire": after_expire["bytes"],
        "objects_after": after["objects"], "bytes_after": after["bytes"],
    }


CHILDREN = {
    "latency": child_latency, "writers_setup": child_writers_setup, "writer": child_writer,
    "writers_verify": child_writers_verify, "arrays": child_arrays, "transfer": child_transfer, "gc": child_gc,
}


def start_child(spec: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(SCRIPT), "_child", json.dumps(spec)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_child(spec: dict, proc: subprocess.Popen) -> dict:
    stdout, stderr = proc.communicate(timeout=CHILD_TIMEOUT_S)
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"icechunk {spec['kind']} exited {proc.returncode} without a result:\n{stderr[-3000:]}")
    if proc.returncode != 0:
        EXITS.append({"kind": spec["kind"], "returncode": proc.returncode})
    return json.loads(lines[-1])


def child(spec: dict) -> dict:
    return finish_child(spec, start_child(spec))


# -- the run ---------------------------------------------------------------------------------


def progress(line: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)


def icechunk_writers(base: dict, n: int, seconds: float, mode: str) -> dict:
    spec = {**base, "prefix": fresh(f"writers{n}-{mode}"), "writers": n}
    child({**spec, "kind": "writers_setup"})
    start_at = time.time() + 3.0 + 0.6 * n  # every process imported and opened before the start
    procs = [(s, start_child(s)) for s in
             ({**spec, "kind": "writer", "writer": w, "start_at": start_at, "seconds": seconds, "mode": mode} for w in range(n))]
    results = [finish_child(s, p) for s, p in procs]
    wall = max(r["finished_at"] for r in results) - start_at
    seen = child({**spec, "kind": "writers_verify"})
    counts = [r["ok"] for r in results]
    total = sum(counts)
    errors = {}
    for r in results:
        for k, v in r["errors"].items():
            if not k.startswith("first_"):
                errors[k] = errors.get(k, 0) + v
            else:
                errors.setdefault(k, v)
    out = {
        "writers": n, "mode": mode, "commits_per_s": total / wall, "commits": total, "seconds": wall,
        "per_writer": counts, "conflicts_retried": sum(r["conflicts"] for r in results), "errors": errors,
        "commits_in_history": seen["commits_in_history"], "lost_commits": total - seen["commits_in_history"],
        "latest_start_s": max(r["late_s"] for r in results),
        "chunks_right": sum(1 for w in range(n) if seen["last"][w] == counts[w]) if seen["uniform"] else 0,
    }
    progress(f"icechunk {n} writers ({mode}): {out['commits_per_s']:.1f} commits/s, {total} commits, per writer {counts}, "
             f"conflicts {out['conflicts_retried']}, in history {seen['commits_in_history']}, chunks right {out['chunks_right']}/{n}")
    return out


def run(args: argparse.Namespace) -> dict:
    only = args.only.split(",") if args.only else WORKLOADS
    writers = [int(n) for n in args.writers.split(",")]
    load_start = os.getloadavg()
    uptime_start = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    binary = args.zarrdb_bench or bench_binary()
    progress(f"zarrdb bench: {binary}")
    server = Server(args.weed, args.server_seconds)
    progress(f"SeaweedFS {server.version} on 127.0.0.1:{server.s3} (metrics {server.metrics}), pid {server.proc.pid}")
    env = server.env()
    base = {"endpoint": f"http://127.0.0.1:{server.s3}"}
    sizes = ["--server-objects", str(args.server_objects)]
    report: dict = {"zarrdb": {}, "icechunk": {}, "requests": {"zarrdb": {}, "icechunk": {}}, "server": {}}

    def measured(side: str, name: str, work):
        # The server's counters around the first run of each workload.
        if name in report["requests"][side]:
            return work()
        before = server.requests()
        began = time.perf_counter()
        out = work()
        report["requests"][side][name] = delta(server.requests(), before)
        report["requests"][side][name]["_wall_s"] = round(time.perf_counter() - began, 3)
        return out

    try:
        report["server"]["start"] = zarrdb(binary, server, ["--workload", "server", *sizes])["server"]
        plan = []
        for name in (w for w in WORKLOADS if w in only):
            plan += [(name, k) for k in range(args.runs if name in REPEATED else 1)]
        runs: dict = {"zarrdb": {}, "icechunk": {}}
        for step, (name, k) in enumerate(plan):
            order = ["zarrdb", "icechunk"] if step % 2 == 0 else ["icechunk", "zarrdb"]
            for side in order:
                progress(f"{name}: {side}")
                if side == "zarrdb":
                    extra = {
                        "latency": ["--latency-commits", str(args.latency_commits)],
                        "arrays": ["--arrays", str(args.arrays)],
                        "small_chunks": ["--small-chunks", str(args.small_chunks)],
                        "whole_array": ["--whole-mib", str(args.whole_mib)],
                        "gc": ["--gc-chunks", str(args.gc_chunks), "--versions", str(args.versions)],
                    }.get(name, [])
                    if name == "writers":
                        got = []
                        for n in writers:
                            got += measured(side, f"writers{n}", lambda n=n: zarrdb(
                                binary, server, ["--workload", "writers", "--writers", str(n), "--seconds", str(args.seconds)]))["writers"]
                        report["zarrdb"]["writers"] = got
                    else:
                        got = measured(side, name, lambda: zarrdb(binary, server, ["--workload", name, *extra]))[name]
                        runs["zarrdb"].setdefault(name, []).append(got)
                        report["zarrdb"][name] = merged(runs["zarrdb"][name])
                    continue
                spec = {**base, "prefix": fresh(name)}
                if name == "latency":
                    got = measured(side, name, lambda: child({**spec, "kind": "latency", "commits": args.latency_commits}))
                elif name == "writers":
                    got = {}
                    for mode in args.icechunk_modes.split(","):
                        got[mode] = [measured(side, f"writers{n}-{mode}", lambda n=n: icechunk_writers(base, n, args.seconds, mode))
                                     for n in writers]
                elif name == "arrays":
                    got = measured(side, name, lambda: child({**spec, "kind": "arrays", "arrays": args.arrays}))
                elif name == "small_chunks":
                    got = measured(side, name, lambda: child({**spec, "kind": "transfer", "bytes": args.small_chunks * 4096, "chunk": 4096}))
                elif name == "whole_array":
                    got = measured(side, name, lambda: child({**spec, "kind": "transfer", "bytes": args.whole_mib << 20, "chunk": 8 << 20}))
                else:
                    aws = {k: v for k, v in env.items() if k.startswith("AWS_")}
                    got = measured(side, name, lambda: child({**spec, "kind": "gc", "gc_chunks": args.gc_chunks,
                                                               "versions": args.versions, "binary": binary, "aws": aws}))
                if name != "writers":
                    if isinstance(got, dict) and "objects" not in got and name in ("arrays", "small_chunks", "whole_array"):
                        got.update({f"stored_{k}": v for k, v in count_objects(binary, env, spec["prefix"]).items()})
                    progress(f"icechunk {name}: {json.dumps(got)[:600]}")
                if name == "writers":
                    report["icechunk"][name] = got
                else:
                    runs["icechunk"].setdefault(name, []).append(got)
                    report["icechunk"][name] = merged(runs["icechunk"][name])
        report["server"]["end"] = zarrdb(binary, server, ["--workload", "server", *sizes])["server"]
    finally:
        server.stop()
    report["machine"] = {
        "cpus": os.cpu_count(), "load_start": load_start, "load_end": os.getloadavg(), "uptime_start": uptime_start,
        "uptime_end": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
        "platform": platform.platform(),
    }
    from importlib.metadata import version

    report["versions"] = {"seaweedfs": server.version, **{p: version(p) for p in ("icechunk", "zarr", "numpy")}}
    report["args"] = vars(args)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    report["zarrdb_commit"] = head  # the working tree may differ from it (benches, src in progress)
    report["child_exits"] = EXITS
    return report


# -- the table -------------------------------------------------------------------------------


def args_n(figure: dict) -> int:
    return figure.get("n", 1)


def rows(r: dict) -> list[list[str]]:
    z, ice = r["zarrdb"], r["icechunk"]
    out = []

    def row(label, zv, iv, unit, higher_better, note=""):
        if zv is None or iv is None:
            ratio = ""
        else:
            ratio = f"{(zv / iv if higher_better else iv / zv):.2f}x"
        def fmt(v):
            if v is None:
                return "n/a"
            if isinstance(v, int):
                return f"{v:,}"
            return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}" if abs(v) >= 1 else f"{v:.3f}"

        out.append([label, f"{fmt(zv)} {unit}", f"{fmt(iv)} {unit}", ratio, note])

    if "latency" in z:
        row("one small-change commit (median)", z["latency"]["ms"], ice["latency"]["ms"], "ms", False,
            f"median of {args_n(z['latency'])} runs' medians")
    if "writers" in z:
        for mode, results in ice["writers"].items():
            for zw, iw in zip(z["writers"], results):
                note = f"zarrdb lost {zw['lost_commits']}, icechunk lost {iw['lost_commits']}; icechunk conflicts {iw['conflicts_retried']}"
                row(f"commits/s, {zw['writers']} writers (icechunk {mode})", zw["commits_per_s"], iw["commits_per_s"], "/s", True, note)
    if "arrays" in z:
        a, ia = z["arrays"], ice["arrays"]
        row(f"{a['arrays']:,}-array commit: whole (stage + commit)", a["total_s"], ia["total_s"], "s", False)
        row(f"{a['arrays']:,}-array commit: commit call", a["commit_s"], ia["commit_s"], "s", False)
    for name in ("small_chunks", "whole_array"):
        if name in z:
            zt, it = z[name], ice[name]
            what = f"{zt['chunks']:,} x {zt['chunk_bytes'] // 1024} KiB"
            runs = f"median of {args_n(zt)} runs"
            row(f"{name} write ({what})", zt["write_MBps"], it["write_MBps"], "MB/s", True, runs)
            row(f"{name} read ({what})", zt["read_MBps"], it["read_MBps"], "MB/s", True, runs)
    if "gc" in z:
        g, ig = z["gc"], ice["gc"]
        row(f"expire {g['versions']} versions", g["expire_ms"], ig["expire_ms"], "ms", False, f"median of {args_n(g)} runs")
        row("collect + compact / garbage_collect", g["collect_ms"] + g["compact_ms"], ig["gc_ms"], "ms", False,
            f"zarrdb collect {g['collect_ms']:.0f} + compact {g['compact_ms']:.0f} ms (medians)")
        row("objects after GC (before)", g["objects_after"], ig["objects_after"], "", False,
            f"before: zarrdb {g['objects_before']}, icechunk {ig['objects_before']}")
        row("bytes after GC (MB)", g["bytes_after"] / 1e6, ig["bytes_after"] / 1e6, "MB", False,
            f"before: zarrdb {g['bytes_before'] / 1e6:.1f}, icechunk {ig['bytes_before'] / 1e6:.1f} MB")
    return out


def print_table(r: dict, out) -> None:
    header = ["row", "zarrdb", "icechunk", "zarrdb ahead by", "notes"]
    body = rows(r)
    widths = [max(len(x[i]) for x in body + [header]) for i in range(len(header))]
    for line in [header, ["-" * w for w in widths]] + body:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths)), file=out)
    for when in ("start", "end"):
        s = r["server"].get(when)
        if s:
            print(f"server ({when}): one 4 KiB PUT {s['put_ms']:.2f} ms, one GET {s['get_ms']:.2f} ms; "
                  f"32 in flight: {s['puts_per_s']:,.0f} PUT/s, {s['gets_per_s']:,.0f} GET/s", file=out)
    print("requests per workload (server counters):", file=out)
    for side, per in r["requests"].items():
        for name, counts in per.items():
            print(f"  {side:8} {name:22} {counts}", file=out)
    print(f"load: {r['machine']['uptime_start']} -> {r['machine']['uptime_end']}", file=out)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "_child":
        spec = json.loads(sys.argv[2])
        print(json.dumps(CHILDREN[spec["kind"]](spec)), flush=True)
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="", help=f"comma-separated workloads of {WORKLOADS}")
    p.add_argument("--runs", type=int, default=3, help=f"runs of {sorted(REPEATED)} (medians)")
    p.add_argument("--latency-commits", type=int, default=50)
    p.add_argument("--writers", default="1,4,16")
    p.add_argument("--seconds", type=float, default=10.0, help="per writer count")
    p.add_argument("--icechunk-modes", default="retry,rebase", help="retry (fresh session) and/or rebase (ConflictDetector)")
    p.add_argument("--arrays", type=int, default=5760)
    p.add_argument("--small-chunks", type=int, default=16_384)
    p.add_argument("--whole-mib", type=int, default=256)
    p.add_argument("--gc-chunks", type=int, default=1000)
    p.add_argument("--versions", type=int, default=100)
    p.add_argument("--server-objects", type=int, default=2000)
    p.add_argument("--weed", default=str(REPO / ".venv/bin/weed"))
    p.add_argument("--server-seconds", type=int, default=3000, help="the server's time limit (timeout)")
    p.add_argument("--zarrdb-bench", default=None, help="the bucket_commits binary (default: cargo bench --no-run)")
    p.add_argument("--json", action="store_true", help="the table on stderr, JSON on stdout")
    args = p.parse_args()
    started = time.time()
    report = run(args)
    report["elapsed_s"] = round(time.time() - started, 1)
    print_table(report, sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
