#!/usr/bin/env python3
"""zarrdb's version history against icechunk 2.3 on local storage, on the same data, in one run.

Both targets hold the same hierarchy: `/big`, a float32 array of `--chunks` chunks of
`--chunk-len` elements (uncompressed, so both store the same bytes per chunk), and `/small`, 16
such chunks. Values come from one formula (`values`). zarrdb is a redb file created with
`history=True`; icechunk is `Repository.create(local_filesystem_storage(...))` with its default
configuration. Measurements, each in a fresh process, targets alternating from run to run:

1. `commit_big`, `commit_small`: write one chunk of `/big` (or `/small`) and commit it with a
   message (zarrdb `store.transaction(message=...)`, icechunk `writable_session` + `commit`);
   the time of the whole change, opening the array included.
2. `tag`: name the latest version while `/big` holds every chunk.
3. `read_tag`: open tag `v1` and read `/big` whole (`ZarrdbStore(path, version="v1")`,
   `repo.readonly_session(tag="v1")`); checked against the formula after the clock stops.
4. `diff`: the difference between tags `v1` and `v2`, which differ in 10 chunks of `/big`
   (`store.diff`, `repo.diff(from_tag=, to_tag=)`); both must name exactly those 10 chunks.
5. `gc_expire`, `gc_collect`: a fresh store of `--gc-chunks` chunks and `--gc-commits` commits,
   each rewriting a tenth of them; expire every version but the latest, then collect
   (`store.expire("main")` + `store.collect()`; `repo.expire_snapshots(older_than=)` +
   `repo.garbage_collect(delete_object_older_than=)`). zarrdb's collection frees space inside its
   file; `gc_compact` (zarrdb only) is the `compact()` that gives it back to the file system, as
   icechunk's deletions do.

Durability differs and is reported, not hidden: zarrdb's default commits are fdatasynced before
they return; icechunk's local storage writes each object to a temporary file and renames it into
place without any fsync (seen with `strace -e trace=fsync,fdatasync`), so a power loss may lose
commits it reported. A third target, `zarrdb-fast` (`durability="fast"`, no sync per commit, single
process), makes the like-for-like comparison for the commit and tag figures; `--no-fast` drops it.

`concurrent` shows two processes committing at once to one store: each commit increments a
counter (read, add one, write) and sets a cell of its own, in one transaction or session with a
message; a writer retries on icechunk's ConflictError with a fresh session, as the example in
earth-mover/icechunk#804 does. Afterwards the counter, the cells and the history of `main` tell
how many reported commits were lost. Icechunk warns that its local storage is not safe for
concurrent commits (earth-mover/icechunk#804, #1494); the figures say what happens.

icechunk 2.3's runtime can end the interpreter with SIGSEGV at exit after the work is done. Each
measurement therefore runs in a child process that prints one JSON line; a child that printed its
result and then died at exit counts as a success, and the exits are reported (`child_exits` in
the JSON).

Run from the repository root with a venv holding zarr 3.4, icechunk 2.3.0 and the zarrdb wheel:

    python benches/peers/history_icechunk.py [--runs 3] [--chunks 30000] [--gc-chunks 4000] [--json]
    python benches/peers/history_icechunk.py concurrent [--commits 50] [--trials 3] [--json]

Prints a table (with `--json`: the table on stderr, the JSON document on stdout). Not part of
the test suite (python/tests/test_history_icechunk_bench.py runs it with tiny sizes).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve()
CHILD_TIMEOUT_S = 1800
SMALL_CHUNKS = 16
DIFF_CHUNKS = 10
# Attempts per commit in the concurrent part before a writer gives that commit up: enough that
# only a writer that can never commit again reaches it.
MAX_ATTEMPTS = 1000
TOTALS = [
    "attempted", "reported_ok", "conflicts_retried", "gave_up", "lost_updates", "lost_commits", "lost_cells",
]
MEASUREMENTS = [
    # name, unit, targets that take part ("fast": zarrdb-fast too)
    ("commit_big", "ms", "fast"),
    ("commit_small", "ms", "fast"),
    ("tag", "ms", "fast"),
    ("read_tag", "ms", "both"),
    ("diff", "ms", "both"),
    ("gc_expire", "ms", "both"),
    ("gc_collect", "ms", "both"),
    ("gc_compact", "ms", "zarrdb"),
]
LABELS = {
    "commit_big": "1. commit one chunk of /big",
    "commit_small": "1b. commit one chunk of /small",
    "tag": "2. create a tag",
    "read_tag": "3. open tag v1, read /big",
    "diff": "4. diff v1..v2 (10 chunks)",
    "gc_expire": "5a. expire all but head",
    "gc_collect": "5b. collect (GC)",
    "gc_compact": "5c. compact (zarrdb only)",
}


# -- data ------------------------------------------------------------------------------------


def values(first: int, count: int, generation: int) -> np.ndarray:
    """Elements first..first+count of the array as written by `generation`: distinct per element
    and per generation, so a chunk read from the wrong version shows."""
    index = np.arange(first, first + count, dtype=np.int64)
    return ((index * 31 + generation * 7919) % 1_000_003).astype(np.float32)


def spread(chunks: int, count: int) -> list[int]:
    """`count` chunk indices spread over `chunks` (the chunks `v2` rewrites)."""
    return sorted({i * chunks // count for i in range(count)})


def disk_bytes(root: Path) -> int:
    """Bytes allocated under root (what `du` counts), so many small files cost what they cost."""
    total = 0
    for folder, _, names in os.walk(root):
        for name in names:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


# -- the two targets, behind one small interface ----------------------------------------------


class Zarrdb:
    """One zarrdb database with history, in `root/db.zarrdb`."""

    def __init__(self, root: Path, fast: bool = False, create: bool = False):
        import zarrdb

        self.zarrdb = zarrdb
        self.path = str(root / "db.zarrdb")
        # Fast durability needs redb's single-process mode (docs/python.md).
        options = {"durability": "fast", "multi_process": False} if fast else {}
        self.store = zarrdb.ZarrdbStore(self.path, history=create, **options)

    def create_arrays(self, arrays: dict[str, tuple[int, int]], message: str) -> None:
        import zarr

        with self.store.transaction(message=message) as tx:
            for name, (chunks, length) in arrays.items():
                zarr.create_array(
                    tx, name=name, shape=(chunks * length,), chunks=(length,), dtype="float32",
                    compressors=None, fill_value=0,
                )

    def write(self, writes: list[tuple[str, int, np.ndarray]], message: str) -> None:
        """One commit holding every (array, first element, values) of writes."""
        import zarr

        with self.store.transaction(message=message) as tx:
            for name, first, data in writes:
                zarr.open_array(tx, path=name)[first : first + len(data)] = data

    def tag(self, name: str) -> None:
        self.store.tag(name)

    def read_version(self, tag: str, name: str) -> np.ndarray:
        import zarr

        return zarr.open_array(self.zarrdb.ZarrdbStore(self.path, version=tag), path=name, mode="r")[:]

    def read(self, name: str, first: int = 0, count: int | None = None) -> np.ndarray:
        import zarr

        array = zarr.open_array(self.store, path=name, mode="r")
        return array[first : None if count is None else first + count]

    def diff_chunks(self, start: str, end: str) -> list[int]:
        """Chunk indices of /big that differ; any other key is listed as it is and makes the
        check fail."""
        out: list = []
        for key, _, _ in self.store.diff(start, end):
            prefix = "big/c/"
            out.append(int(key[len(prefix) :]) if key.startswith(prefix) else key)
        return out

    def versions(self) -> int:
        return len(self.store.log())

    def expire_all_but_head(self) -> dict:
        return {"horizon": self.store.expire("main")}

    def collect(self) -> dict:
        freed = self.store.collect()
        return {"versions": freed.versions, "values": freed.values, "bytes": freed.bytes}

    def compact(self) -> dict:
        before, after = self.store.compact()
        return {"file_before": before, "file_after": after}

    def close(self) -> None:
        # While open, recent commits sit in the commit log beside the file (README); closing
        # folds them in, so the space on disk is measured closed.
        self.store.close()


class Icechunk:
    """One icechunk repository on local file storage, in `root/repo`."""

    def __init__(self, root: Path, fast: bool = False, create: bool = False):
        import icechunk

        self.ic = icechunk
        storage = icechunk.local_filesystem_storage(str(root / "repo"))
        self.repo = icechunk.Repository.create(storage) if create else icechunk.Repository.open(storage)

    def create_arrays(self, arrays: dict[str, tuple[int, int]], message: str) -> None:
        import zarr

        session = self.repo.writable_session("main")
        for name, (chunks, length) in arrays.items():
            zarr.create_array(
                session.store, name=name, shape=(chunks * length,), chunks=(length,), dtype="float32",
                compressors=None, fill_value=0,
            )
        session.commit(message)

    def write(self, writes: list[tuple[str, int, np.ndarray]], message: str) -> None:
        import zarr

        session = self.repo.writable_session("main")
        for name, first, data in writes:
            zarr.open_array(session.store, path=name)[first : first + len(data)] = data
        session.commit(message)

    def tag(self, name: str) -> None:
        self.repo.create_tag(name, self.repo.lookup_branch("main"))

    def read_version(self, tag: str, name: str) -> np.ndarray:
        import zarr

        return zarr.open_array(self.repo.readonly_session(tag=tag).store, path=name, mode="r")[:]

    def read(self, name: str, first: int = 0, count: int | None = None) -> np.ndarray:
        import zarr

        array = zarr.open_array(self.repo.readonly_session(branch="main").store, path=name, mode="r")
        return array[first : None if count is None else first + count]

    def diff_chunks(self, start: str, end: str) -> list:
        """Chunk indices of /big that differ; anything else (other arrays, new or changed
        nodes) is listed as such and makes the check fail."""
        diff = self.repo.diff(from_tag=start, to_tag=end)
        out: list = []
        for path, coords in diff.updated_chunks.items():
            out += [c[0] if path == "/big" else f"{path}/{c}" for c in coords]
        nodes = diff.new_arrays | diff.updated_arrays | diff.new_groups | diff.updated_groups
        return out + sorted(nodes)

    def versions(self) -> int:
        return sum(1 for _ in self.repo.ancestry(branch="main"))

    def expire_all_but_head(self) -> dict:
        # The bound is exclusive and main's tip is never expired: everything older goes.
        expired = self.repo.expire_snapshots(older_than=datetime.datetime.now(datetime.timezone.utc))
        return {"expired_snapshots": len(expired)}

    def collect(self) -> dict:
        now = datetime.datetime.now(datetime.timezone.utc)
        summary = self.repo.garbage_collect(delete_object_older_than=now)
        return {
            "snapshots": summary.snapshots_deleted,
            "manifests": summary.manifests_deleted,
            "chunks": summary.chunks_deleted,
            "bytes": summary.bytes_deleted,
            "transaction_logs": summary.transaction_logs_deleted,
            "failed": summary.objects_failed_to_delete,
        }

    def close(self) -> None:
        pass


def open_target(target: str, root: Path, create: bool = False):
    if target == "icechunk":
        return Icechunk(root, create=create)
    return Zarrdb(root, fast=target == "zarrdb-fast", create=create)


# -- child processes: one measurement each ----------------------------------------------------


def opened(target: str, root: Path):
    """The target, open: zarrdb opens its database at first use and icechunk's Repository.open
    reads the repository, so one untimed look at the history puts both in the same state."""
    t = open_target(target, root)
    t.versions()
    return t


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return (time.perf_counter() - start) * 1e3, out


def child_setup(spec: dict) -> dict:
    """The shared dataset: /big and /small at generation 0, tag v1, then 10 chunks of /big
    rewritten, tag v2."""
    root, chunks, length = Path(spec["root"]), spec["chunks"], spec["chunk_len"]
    t = open_target(spec["target"], root, create=True)
    t.create_arrays({"big": (chunks, length), "small": (SMALL_CHUNKS, length)}, "create")
    start = time.perf_counter()
    fill = [("big", 0, values(0, chunks * length, 0)), ("small", 0, values(0, SMALL_CHUNKS * length, 0))]
    t.write(fill, "fill")
    fill_s = time.perf_counter() - start
    t.tag("v1")
    ten = [("big", c * length, values(c * length, length, 1)) for c in spread(chunks, DIFF_CHUNKS)]
    t.write(ten, "ten chunks")
    t.tag("v2")
    t.close()
    # The measurements that follow should not pay for writing this setup back (see child_gc).
    os.sync()
    return {"fill_s": fill_s, "disk_bytes": disk_bytes(root)}


def child_commit(spec: dict) -> dict:
    """Untimed warm-up, then `reps` commits of one chunk each, at indices no tag depends on."""
    t = opened(spec["target"], Path(spec["root"]))
    name = spec["array"]
    chunks, length = (spec["chunks"] if name == "big" else SMALL_CHUNKS), spec["chunk_len"]
    samples = []
    for k in range(spec["reps"] + 1):
        chunk = (spec["seed"] * 1009 + k * 7919) % chunks
        generation = 100 + spec["seed"] * 1000 + k
        data = values(chunk * length, length, generation)
        ms, _ = timed(lambda: t.write([(name, chunk * length, data)], f"run {spec['seed']} change {k}"))
        if k:
            samples.append(ms)
    # The last write is what the head holds.
    back = t.read(name, chunk * length, length)
    assert np.array_equal(back, data), "the committed chunk does not read back"
    return {"samples": samples}


def child_tag(spec: dict) -> dict:
    t = opened(spec["target"], Path(spec["root"]))
    samples = []
    for k in range(spec["reps"] + 1):
        ms, _ = timed(lambda: t.tag(f"run{spec['seed']}-{spec['target']}-{k}"))
        if k:
            samples.append(ms)
    return {"samples": samples}


def child_read_tag(spec: dict) -> dict:
    """`read_reps` reads, without a warm-up: the first read of an old version in a fresh process
    is the one a user waits for, and whole reads of a large array are the slowest figures here."""
    t = opened(spec["target"], Path(spec["root"]))
    expected = values(0, spec["chunks"] * spec["chunk_len"], 0)
    samples = []
    for _ in range(spec["read_reps"]):
        ms, got = timed(lambda: t.read_version("v1", "big"))
        assert np.array_equal(got, expected), "tag v1 does not read as written"
        samples.append(ms)
    return {"samples": samples, "bytes": expected.nbytes}


def child_diff(spec: dict) -> dict:
    t = opened(spec["target"], Path(spec["root"]))
    expected = spread(spec["chunks"], DIFF_CHUNKS)
    samples = []
    for k in range(spec["reps"] + 1):
        ms, got = timed(lambda: t.diff_chunks("v1", "v2"))
        assert sorted(got) == expected, f"diff v1..v2 names {got}, not {expected}"
        if k:
            samples.append(ms)
    return {"samples": samples}


def child_gc(spec: dict) -> dict:
    """A fresh store: the array at generation 0, then `gc_commits` commits each rewriting a tenth
    of the chunks (a rotating block), then expiry of all but the head and a collection, timed
    apart; the head must read as written afterwards."""
    root, length = Path(spec["root"]), spec["chunk_len"]
    chunks, commits = spec["gc_chunks"], spec["gc_commits"]
    target = spec["target"]
    t = open_target(target, root, create=True)
    t.create_arrays({"big": (chunks, length)}, "create")
    t.write([("big", 0, values(0, chunks * length, 0))], "fill")
    expected = values(0, chunks * length, 0)
    block = max(1, chunks // 10)
    start = time.perf_counter()
    for j in range(1, commits + 1):
        first = ((j - 1) % 10) * block * length
        data = values(first, block * length, j)
        t.write([("big", first, data)], f"rewrite {j}")
        expected[first : first + len(data)] = data
    commit_s = time.perf_counter() - start
    t.close()
    # Closing zarrdb folds its commit log into the file through the page cache; without a sync
    # here the next fdatasync (the timed expiry's) would pay for writing all of it back.
    os.sync()
    before = {"disk_bytes": disk_bytes(root)}
    t = opened(target, root)
    before["versions"] = t.versions()
    expire_ms, expired = timed(t.expire_all_but_head)
    collect_ms, collected = timed(t.collect)
    out = {
        "commit_s": commit_s,
        "before": before,
        "expired": expired,
        "collected": collected,
        "gc_expire": expire_ms,
        "gc_collect": collect_ms,
    }
    if target == "zarrdb":
        out["gc_compact"], out["compacted"] = timed(t.compact)
    out["after"] = {"versions": t.versions()}
    t.close()
    os.sync()
    out["after"]["disk_bytes"] = disk_bytes(root)
    t = open_target(target, root)
    assert np.array_equal(t.read("big"), expected), "the head does not read as written after GC"
    return out


def writer(spec: dict) -> dict:
    """One of the concurrent writers: `commits` commits, each incrementing /counter and setting
    this writer's own cell, retried after a conflict with a fresh transaction or session."""
    import zarr

    me, commits, target = spec["writer"], spec["commits"], spec["target"]
    t = open_target(target, Path(spec["root"]))
    ok, conflicts, errors, gave_up, ids, most_attempts = 0, 0, {}, 0, [], 0
    while time.time() < spec["start_at"]:
        time.sleep(0.001)
    for i in range(commits):
        message = f"w{me}-{i}"
        for attempt in range(1, MAX_ATTEMPTS + 1):
            most_attempts = max(most_attempts, attempt)
            try:
                if target == "icechunk":
                    session = t.repo.writable_session("main")
                    counter = zarr.open_array(session.store, path="counter")
                    counter[0] = counter[0] + 1
                    zarr.open_array(session.store, path="cells")[me * commits + i] = i + 1
                    ids.append(session.commit(message))
                else:
                    with t.store.transaction(message=message) as tx:
                        counter = zarr.open_array(tx, path="counter")
                        counter[0] = counter[0] + 1
                        zarr.open_array(tx, path="cells")[me * commits + i] = i + 1
                ok += 1
                break
            except Exception as e:  # every failure is counted by type, then retried
                kind = type(e).__name__
                if kind == "ConflictError":
                    conflicts += 1
                else:
                    errors[kind] = errors.get(kind, 0) + 1
                    errors.setdefault("first_" + kind, str(e)[:300])
        else:
            gave_up += 1
    return {
        "ok": ok, "conflicts": conflicts, "errors": errors, "gave_up": gave_up, "ids": ids,
        "most_attempts": most_attempts, "finished_at": time.time(),
    }


def concurrent_setup(spec: dict) -> dict:
    import zarr

    target, root = spec["target"], Path(spec["root"])
    t = open_target(target, root, create=True)
    if target == "icechunk":
        session = t.repo.writable_session("main")
        store = session.store
    else:
        store = t.store
    zarr.create_array(store, name="counter", shape=(1,), chunks=(1,), dtype="int64", fill_value=0)
    cells = (2 * spec["commits"],)
    zarr.create_array(store, name="cells", shape=cells, chunks=(1,), dtype="int64", fill_value=0)
    if target == "icechunk":
        session.commit("create")
    return {}


def concurrent_verify(spec: dict) -> dict:
    import zarr

    target, root, commits = spec["target"], Path(spec["root"]), spec["commits"]
    t = open_target(target, root)
    if target == "icechunk":
        store = t.repo.readonly_session(branch="main").store
        history = [(s.id, s.message) for s in t.repo.ancestry(branch="main")]
    else:
        store = t.zarrdb.ZarrdbStore(t.path, read_only=True)
        history = [(c.id, c.message) for c in t.store.log()]
    counter = int(zarr.open_array(store, path="counter", mode="r")[0])
    cells = zarr.open_array(store, path="cells", mode="r")[:]
    expected_cells = np.concatenate([np.arange(1, commits + 1)] * 2)
    return {
        "counter": counter,
        "cells_set": int(np.sum(cells == expected_cells)),
        "messages": sorted(m for _, m in history if m.startswith("w")),
        "history_ids": [i for i, _ in history],
    }


CHILDREN = {
    "setup": child_setup,
    "commit": child_commit,
    "tag": child_tag,
    "read_tag": child_read_tag,
    "diff": child_diff,
    "gc": child_gc,
    "writer": writer,
    "concurrent_setup": concurrent_setup,
    "concurrent_verify": concurrent_verify,
}


def child_main(spec: dict) -> None:
    out = CHILDREN[spec["kind"]](spec)
    print(json.dumps(out), flush=True)


# -- the parent ------------------------------------------------------------------------------


EXITS: list[dict] = []


def start_child(spec: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), "_child", json.dumps(spec)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def finish_child(spec: dict, proc: subprocess.Popen) -> dict:
    """The child's JSON line. A child that printed it and then died at exit is a success (see
    the module docstring); its exit is recorded."""
    stdout, stderr = proc.communicate(timeout=CHILD_TIMEOUT_S)
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(
            f"{spec['kind']} on {spec['target']} exited {proc.returncode} without a result:\n{stderr[-3000:]}"
        )
    if proc.returncode != 0:
        EXITS.append({"kind": spec["kind"], "target": spec["target"], "returncode": proc.returncode})
    return json.loads(lines[-1])


def child(spec: dict) -> dict:
    return finish_child(spec, start_child(spec))


def progress(line: str) -> None:
    # A long run shows where it is; stdout stays for the table or the JSON.
    print(f"[{time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)


def summary(samples: list[float]) -> dict:
    return {
        "median": statistics.median(samples),
        "min": min(samples),
        "max": max(samples),
        "n": len(samples),
        "samples": samples,
    }


def versions_of() -> dict:
    from importlib.metadata import version

    return {name: version(name) for name in ("zarrdb", "icechunk", "zarr", "numpy")}


def figure(stats: dict | None) -> str:
    if stats is None:
        return "n/a"
    m, lo, hi = stats["median"], stats["min"], stats["max"]
    fmt = (lambda v: f"{v:.0f}") if m >= 100 else (lambda v: f"{v:.2f}") if m < 10 else (lambda v: f"{v:.1f}")
    return f"{fmt(m)} [{fmt(lo)}–{fmt(hi)}]"


def print_table(results: dict, targets: list[str], out) -> None:
    header = ["measurement (ms: median [min–max])"] + targets + ["icechunk / zarrdb", "n"]
    rows = []
    for name, _, _ in MEASUREMENTS:
        row = results.get(name, {})
        cells = [figure(row.get(t)) for t in targets]
        ratio = ""
        if row.get("zarrdb") and row.get("icechunk"):
            ratio = f"{row['icechunk']['median'] / row['zarrdb']['median']:.2f}x"
        counts = sorted({str(stats["n"]) for stats in row.values()})
        rows.append([LABELS[name]] + cells + [ratio, "/".join(counts)])
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths]] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)), file=out)


def bench(args: argparse.Namespace) -> dict:
    base = Path(tempfile.mkdtemp(prefix="history-ice-", dir=args.tmp))
    load_at_start = os.getloadavg()
    targets = ["zarrdb", "icechunk"] + ([] if args.no_fast else ["zarrdb-fast"])
    common = {
        "chunks": args.chunks, "chunk_len": args.chunk_len, "reps": args.reps, "read_reps": args.read_reps,
    }
    samples: dict[str, dict[str, list[float]]] = {name: {} for name, _, _ in MEASUREMENTS}
    details: dict = {"setup": {}, "gc": {"zarrdb": [], "icechunk": []}}
    try:
        # One shared dataset per store; zarrdb-fast opens zarrdb's file with fast durability.
        roots = {"zarrdb": base / "zarrdb", "icechunk": base / "icechunk"}
        roots["zarrdb-fast"] = roots["zarrdb"]
        for target in ("zarrdb", "icechunk"):
            roots[target].mkdir()
            spec = {**common, "kind": "setup", "target": target, "root": str(roots[target])}
            details["setup"][target] = child(spec)
            progress(f"setup {target}: {details['setup'][target]}")
        for run in range(args.runs):
            for name, _, who in MEASUREMENTS:
                if name.startswith("gc_"):
                    continue
                taking_part = [t for t in targets if who == "fast" or t != "zarrdb-fast"]
                # Rotate the order from run to run so neither target always goes first.
                shift = run % len(taking_part)
                for target in taking_part[shift:] + taking_part[:shift]:
                    spec = {**common, "target": target, "root": str(roots[target]), "seed": run}
                    if name.startswith("commit_"):
                        spec.update(kind="commit", array=name.removeprefix("commit_"))
                    else:
                        spec["kind"] = name
                    got = child(spec)
                    samples[name].setdefault(target, []).extend(got["samples"])
                    progress(f"run {run} {name} {target}: {', '.join(f'{v:.2f}' for v in got['samples'])} ms")
            for target in (["zarrdb", "icechunk"] if run % 2 == 0 else ["icechunk", "zarrdb"]):
                root = base / f"gc-{target}-{run}"
                root.mkdir()
                got = child({
                    "kind": "gc", "target": target, "root": str(root), "chunk_len": args.chunk_len,
                    "gc_chunks": args.gc_chunks, "gc_commits": args.gc_commits,
                })
                for name in ("gc_expire", "gc_collect", "gc_compact"):
                    if name in got:
                        samples[name].setdefault(target, []).append(got.pop(name))
                details["gc"][target].append(got)
                progress(f"run {run} gc {target}: {got}")
                shutil.rmtree(root)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    results = {name: {t: summary(s) for t, s in per.items()} for name, per in samples.items()}
    return {
        "versions": versions_of(),
        "machine": {
            "cpus": os.cpu_count(), "load_at_start": load_at_start, "load_at_end": os.getloadavg(),
            "platform": platform.platform(),
        },
        "args": {k: v for k, v in vars(args).items() if k != "command"},
        "durability": {
            "zarrdb": "durable: fdatasync per commit and per tag",
            "zarrdb-fast": "fast: no sync per commit (single-process mode)",
            "icechunk": "local storage: write a temporary file, rename it into place, no fsync",
        },
        "results": results,
        "details": details,
        "child_exits": EXITS,
        "targets": targets,
    }


def concurrent(args: argparse.Namespace) -> dict:
    base = Path(tempfile.mkdtemp(prefix="history-ice-conc-", dir=args.tmp))
    trials = []
    try:
        for trial in range(args.trials):
            for target in (["zarrdb", "icechunk"] if trial % 2 == 0 else ["icechunk", "zarrdb"]):
                root = base / f"{target}-{trial}"
                root.mkdir()
                common = {"target": target, "root": str(root), "commits": args.commits}
                child({**common, "kind": "concurrent_setup"})
                # Both writers wait for one moment, after their imports, so their commits overlap.
                start_at = time.time() + args.start_delay
                specs = [{**common, "kind": "writer", "writer": w, "start_at": start_at} for w in (0, 1)]
                procs = [(spec, start_child(spec)) for spec in specs]
                started = time.perf_counter()
                writers = [finish_child(spec, proc) for spec, proc in procs]
                wall_s = time.perf_counter() - started - args.start_delay
                seen = child({**common, "kind": "concurrent_verify"})
                reported = sum(w["ok"] for w in writers)
                ids = [i for w in writers for i in w["ids"]]
                in_history = set(seen["history_ids"])
                trials.append({
                    "target": target,
                    "trial": trial,
                    "attempted": 2 * args.commits,
                    "reported_ok": reported,
                    "conflicts_retried": sum(w["conflicts"] for w in writers),
                    "errors": [w["errors"] for w in writers],
                    "gave_up": sum(w["gave_up"] for w in writers),
                    "most_attempts": max(w["most_attempts"] for w in writers),
                    "finish_gap_s": round(abs(writers[0]["finished_at"] - writers[1]["finished_at"]), 3),
                    "counter": seen["counter"],
                    "lost_updates": reported - seen["counter"],
                    "commits_in_history": len(seen["messages"]),
                    "lost_commits": reported - len(seen["messages"]),
                    "duplicate_messages": len(seen["messages"]) - len(set(seen["messages"])),
                    "cells_set": seen["cells_set"],
                    "lost_cells": reported - seen["cells_set"],
                    # icechunk's commit returns the snapshot id: ids it reported that main's
                    # history no longer reaches.
                    "reported_ids_missing": sum(1 for i in ids if i not in in_history) if ids else None,
                    "wall_s": round(wall_s, 3),
                })
                shutil.rmtree(root)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    totals = {}
    for target in ("zarrdb", "icechunk"):
        mine = [t for t in trials if t["target"] == target]
        totals[target] = {
            key: sum(t[key] for t in mine)
            for key in TOTALS
        }
        kinds = {k for t in mine for e in t["errors"] for k in e if not k.startswith("first_")}
        totals[target]["error_kinds"] = sorted(kinds)
    return {"versions": versions_of(), "args": {k: v for k, v in vars(args).items() if k != "command"},
            "totals": totals, "trials": trials, "child_exits": EXITS}


def print_concurrent(report: dict, out) -> None:
    keys = TOTALS
    print("two processes committing at once (totals over trials)", file=out)
    print("  ".join(["target".ljust(9)] + [k for k in keys] + ["errors"]), file=out)
    for target, t in report["totals"].items():
        cells = [target.ljust(9)] + [str(t[k]).rjust(len(k)) for k in keys]
        cells.append(",".join(t["error_kinds"]) or "-")
        print("  ".join(cells), file=out)
    print("per trial:", file=out)
    for t in report["trials"]:
        print(
            f"  {t['target']:9} trial {t['trial']}: ok {t['reported_ok']}/{t['attempted']}, "
            f"counter {t['counter']}, "
            f"history {t['commits_in_history']}, cells {t['cells_set']}, conflicts {t['conflicts_retried']}, "
            f"most attempts {t['most_attempts']}, errors {t['errors']}, wall {t['wall_s']} s",
            file=out,
        )


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "_child":
        child_main(json.loads(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", choices=["bench", "concurrent"], default="bench")
    parser.add_argument("--runs", type=int, default=3, help="runs; targets alternate between them")
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions per child, after one untimed")
    parser.add_argument("--read-reps", type=int, default=2, help="timed whole reads of tag v1 per child")
    parser.add_argument("--chunks", type=int, default=30_000, help="chunks of /big")
    parser.add_argument("--chunk-len", type=int, default=256, help="float32 elements per chunk")
    parser.add_argument("--gc-chunks", type=int, default=4_000, help="chunks of the GC store")
    parser.add_argument(
        "--gc-commits", type=int, default=100, help="commits before expiry, each rewriting a tenth"
    )
    parser.add_argument("--no-fast", action="store_true", help="leave out zarrdb with fast durability")
    parser.add_argument("--commits", type=int, default=50, help="concurrent: commits per writer")
    parser.add_argument("--trials", type=int, default=3, help="concurrent: trials per target")
    parser.add_argument(
        "--start-delay", type=float, default=3.0, help="concurrent: seconds for writers to start"
    )
    parser.add_argument("--tmp", default=None, help="folder for the stores (default: the system's)")
    parser.add_argument("--keep", action="store_true", help="keep the stores")
    parser.add_argument("--json", action="store_true", help="the table on stderr, JSON on stdout")
    args = parser.parse_args()
    out = sys.stderr if args.json else sys.stdout
    started = time.time()
    if args.command == "concurrent":
        report = concurrent(args)
        print_concurrent(report, out)
    else:
        report = bench(args)
        print_table(report["results"], report["targets"], out)
        s = report["details"]["setup"]
        fills = ", ".join(f"{t} {s[t]['fill_s']:.1f} s" for t in s)
        disks = ", ".join(f"{t} {s[t]['disk_bytes'] / 1e6:.1f} MB" for t in s)
        shape = f"/big {args.chunks} chunks x {args.chunk_len * 4} B"
        print(f"setup: {shape}; fill {fills}; on disk {disks}", file=out)
        for target, runs in report["details"]["gc"].items():
            if runs:
                g = runs[0]
                print(
                    f"gc {target} (run 0): {g['before']['versions']} -> {g['after']['versions']} versions, "
                    f"disk {g['before']['disk_bytes'] / 1e6:.1f} -> {g['after']['disk_bytes'] / 1e6:.1f} MB, "
                    f"collected {g['collected']}, {args.gc_commits} commits took {g['commit_s']:.1f} s",
                    file=out,
                )
    report["elapsed_s"] = round(time.time() - started, 1)
    if EXITS:
        print(f"children that printed their result, then exited abnormally: {EXITS}", file=out)
    print(f"elapsed {report['elapsed_s']} s", file=out)
    # The JSON always follows; --json only moves the table out of its way.
    print(json.dumps(report))


if __name__ == "__main__":
    main()
