"""One writer of the concurrent partial-write scenario (issue 15, item 5), shared by
``test_concurrent_partial_writes.py`` (threads of the test process, and worker processes that run
this file) and by ``python/bench/concurrent_partial_writes.py``.

The array is one int32 array, (256, 256) in (32, 32) chunks with zstd. Of ``writers`` writers,
writer ``w`` owns the columns ``w::writers``, so every chunk holds elements of every writer, and
each write of a writer's columns is a read-modify-write of every chunk by zarr-python. Round ``r``
of writer ``w`` first checks that its columns hold what its previous round wrote (an update lost
to another writer's read-modify-write would show there), then writes ``value(w, r)``.

As a process: ``python _partial_writer.py PATH BACKEND MODE WRITER WRITERS ROUNDS``. It opens
the store, prints ``ready``, waits for one line on stdin (so every writer starts together), runs
its rounds and prints one JSON line: the problems found.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from typing import Literal, NamedTuple

import numpy as np
import zarr
from zarr.codecs import ZstdCodec

from zarrdb import ZarrdbStore

ARRAY = "a"
SHAPE = (256, 256)
CHUNKS = (32, 32)

# "transaction": each round runs in `with store.transaction() as tx:` (the guarantee);
# "plain": straight `arr[...] = v` on the store (zarr-python's own read-modify-write);
# "pipeline": straight assignments of boxes through `zarrdb.CodecPipeline` (the engine's region
# writes): writer w owns the column pairs 2p, 2p+1 with p % writers == w, one box each.
Mode = Literal["transaction", "plain", "pipeline"]

PIPELINE = {"codec_pipeline.path": "zarrdb.CodecPipeline"}


def owned(writer: int, writers: int, mode: Mode) -> np.ndarray:
    """The columns ``writer`` owns: every ``writers``-th one, or in "pipeline" mode every
    ``writers``-th pair (so each of its writes is a box, still sharing every chunk)."""
    columns = np.arange(SHAPE[1])
    if mode == "pipeline":
        return columns[(columns // 2) % writers == writer]
    return columns[writer::writers]


def value(writer: int, round_: int) -> int:
    """What ``writer`` writes in ``round_``: unique per writer and round, never the fill value 0."""
    return writer * 1000 + round_ + 1


def open_store(path: str, backend: str) -> ZarrdbStore:
    """The store every writer opens: redb in multi-writer mode, so processes share the file."""
    return ZarrdbStore(path, backend=backend, multi_process=backend == "redb")  # type: ignore[arg-type]


def create(store: ZarrdbStore) -> None:
    """Create the shared array, every element the fill value 0."""
    zarr.create_array(
        store,
        name=ARRAY,
        shape=SHAPE,
        chunks=CHUNKS,
        dtype="int32",
        fill_value=0,
        compressors=ZstdCodec(),
    )


def _round(arr: zarr.Array, mode: Mode, writer: int, writers: int, round_: int) -> str | None:
    expected = value(writer, round_ - 1) if round_ else 0
    if mode == "pipeline":
        mine = np.asarray(arr[:])[:, owned(writer, writers, mode)]
        lost = int(np.count_nonzero(mine != expected))
        for pair in range(2 * writer, SHAPE[1], 2 * writers):
            arr[:, pair : pair + 2] = value(writer, round_)
    else:
        mine = np.asarray(arr[:, writer::writers])
        lost = int(np.count_nonzero(mine != expected))
        arr[:, writer::writers] = value(writer, round_)
    if lost:
        return f"writer {writer} round {round_}: {lost} of its elements lost their last update"
    return None


def run_writer(store: ZarrdbStore, mode: Mode, writer: int, writers: int, rounds: int) -> list[str]:
    """Run ``rounds`` rounds of ``writer``; the lost updates it saw, described."""
    problems = []
    for round_ in range(rounds):
        if mode == "transaction":
            with store.transaction() as tx:
                problem = _round(zarr.open_array(tx, path=ARRAY), mode, writer, writers, round_)
        elif mode == "pipeline":
            with zarr.config.set(PIPELINE):
                problem = _round(zarr.open_array(store, path=ARRAY), mode, writer, writers, round_)
        else:
            problem = _round(zarr.open_array(store, path=ARRAY), mode, writer, writers, round_)
        if problem:
            problems.append(problem)
    return problems


def final_problems(store: ZarrdbStore, mode: Mode, writers: int, rounds: int) -> list[str]:
    """Every element must hold its owner's last value."""
    data = np.asarray(zarr.open_array(store.snapshot(), path=ARRAY, mode="r")[:])
    problems = []
    for writer in range(writers):
        lost = int(np.count_nonzero(data[:, owned(writer, writers, mode)] != value(writer, rounds - 1)))
        if lost:
            problems.append(f"writer {writer}: {lost} elements do not hold its last value")
    return problems


class Outcome(NamedTuple):
    """What a scenario found, and how long its writes took (for the benchmark, not the tests)."""

    problems: list[str]
    seconds: float
    writes: int


def run_scenario(
    path: str, backend: str, mode: Mode, threads: int, processes: int, rounds: int, timeout: float = 120
) -> Outcome:
    """Create the array at ``path``, then run ``threads`` writers in this process and
    ``processes`` writer processes at once, ``rounds`` rounds each; the lost updates found by the
    writers and by the final check (and the seconds from the start signal to the last writer's
end). Writers 0.. are the threads, the processes come after."""
    store = open_store(path, backend)
    create(store)
    writers = threads + processes
    workers = [
        subprocess.Popen(
            [sys.executable, __file__, path, backend, mode, str(threads + i), str(writers), str(rounds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    problems: list[str] = []
    try:
        for worker in workers:
            assert worker.stdout is not None
            line = worker.stdout.readline()
            if line.strip() != "ready":
                _, err = worker.communicate(timeout=timeout)
                raise RuntimeError(f"a writer process failed to start: {line!r} {err}")
        results: list[list[str]] = [[] for _ in range(threads)]

        def thread_writer(writer: int) -> None:
            try:
                results[writer] = run_writer(store, mode, writer, writers, rounds)
            except Exception as e:  # reported as a problem: a writer that failed lost its updates
                results[writer] = [f"writer {writer} failed: {e!r}"]

        pool = [threading.Thread(target=thread_writer, args=(w,)) for w in range(threads)]
        start = time.perf_counter()
        for thread in pool:
            thread.start()
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
        for worker in workers:
            out, err = worker.communicate(timeout=timeout)
            if worker.returncode != 0:
                raise RuntimeError(f"a writer process failed: {err}")
            problems += json.loads(out.strip().splitlines()[-1])
        for thread in pool:
            thread.join(timeout)
            if thread.is_alive():
                raise RuntimeError("a writer thread did not finish in time")
        seconds = time.perf_counter() - start
        for result in results:
            problems += result
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    return Outcome(problems + final_problems(store, mode, writers, rounds), seconds, writers * rounds)


def main(argv: list[str]) -> int:
    path, backend, mode, writer, writers, rounds = argv
    store = open_store(path, backend)
    store.get_sync("zarr.json")  # open the database before saying ready
    print("ready", flush=True)
    sys.stdin.readline()
    problems = run_writer(store, mode, int(writer), int(writers), int(rounds))  # type: ignore[arg-type]
    print(json.dumps(problems), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
