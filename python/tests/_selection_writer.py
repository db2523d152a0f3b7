"""One writer of ``test_no_lost_updates.py``: four writers assign interleaved elements of one
array through one kind of zarr-python selection, without transactions.

The array is int32, (16, 16) in (8, 8) chunks (zstd), fill value 0: four chunks, and every
writer's elements lie in every chunk, so each assignment is a read-modify-write of chunks the
other writers change too. Writer ``w`` owns the columns ``c`` with ``c % 4 == w`` ("basic" owns
column pairs instead, ``(c // 2) % 4 == w``, so that each of its assignments is a box). Round
``r`` of a writer reads the array, counts its elements that do not hold what its previous round
wrote (an update lost to another writer's read-modify-write shows there), then assigns
``value(w, r)`` through its selection kind:

- ``basic``: ``a[:, 8j + 2w : 8j + 2w + 2] = v`` for each chunk column ``j`` (boxes);
- ``stepped``: ``a[:, w::4] = v``;
- ``orthogonal``: ``a.oindex[mask, columns] = v`` (a boolean mask of every row, integer columns);
- ``coordinate``: ``a.vindex[rows, columns] = v`` (each owned element's coordinates);
- ``block``: ``a.blocks[:, :] = v``, every chunk whole. Block selections write whole chunks,
  which zarr-python never reads, so nothing can be lost between writers: what can go wrong is an
  assignment stored chunk by chunk, interleaved with another writer's. Each writer then checks
  that every read shows one assignment in all four chunks (one value), and the final check
  that the last assignment holds everywhere.

As a process: ``python _selection_writer.py PATH KIND PIPELINE WRITER ROUNDS``. It opens the
store, prints ``ready``, waits for one line on stdin (so every writer starts together), runs its
rounds and prints one JSON line: the problems found.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Literal

import numpy as np
import zarr
from zarr.codecs import ZstdCodec

from zarrdb import ZarrdbStore

Kind = Literal["basic", "stepped", "orthogonal", "coordinate", "block"]
KINDS: tuple[Kind, ...] = ("basic", "stepped", "orthogonal", "coordinate", "block")
WRITERS = 4
SHAPE = (16, 16)
CHUNKS = (8, 8)
# Set explicitly in the "pipeline" runs; the "plain" runs keep the configuration zarrdb's
# import leaves (no codec pipeline named by the user).
PIPELINE = {"codec_pipeline.path": "zarrdb.CodecPipeline"}


def owned(kind: Kind, writer: int) -> np.ndarray:
    """A boolean mask of the elements ``writer`` owns."""
    columns = np.arange(SHAPE[1])
    if kind == "basic":
        mine = (columns // 2) % WRITERS == writer
    else:
        mine = columns % WRITERS == writer
    return np.broadcast_to(mine, SHAPE)


def value(writer: int, round_: int) -> int:
    """What ``writer`` writes in ``round_``: unique per writer and round, never the fill value 0."""
    return writer * 1000 + round_ + 1


def create(store: ZarrdbStore) -> None:
    zarr.create_array(
        store, name="a", shape=SHAPE, chunks=CHUNKS, dtype="int32", fill_value=0, compressors=ZstdCodec()
    )


def assign(array: zarr.Array, kind: Kind, writer: int, v: int) -> None:
    if kind == "basic":
        for start in range(2 * writer, SHAPE[1], 2 * WRITERS):
            array[:, start : start + 2] = v
    elif kind == "stepped":
        array[:, writer::WRITERS] = v
    elif kind == "orthogonal":
        array.oindex[np.ones(SHAPE[0], dtype=bool), np.arange(writer, SHAPE[1], WRITERS)] = v
    elif kind == "coordinate":
        rows, columns = np.nonzero(owned(kind, writer))
        array.vindex[rows, columns] = np.full(rows.size, v, dtype="int32")
    else:
        grid = (SHAPE[0] // CHUNKS[0], SHAPE[1] // CHUNKS[1])
        array.blocks[0 : grid[0], 0 : grid[1]] = np.full(SHAPE, v, dtype="int32")


def _round(array: zarr.Array, kind: Kind, writer: int, round_: int) -> str | None:
    seen = np.asarray(array[:])
    problem = None
    if kind == "block":
        tags = np.unique(seen)
        if tags.size != 1:
            problem = f"writer {writer} round {round_}: one read shows {tags.size} assignments ({tags.tolist()})"
    else:
        expected = value(writer, round_ - 1) if round_ else 0
        lost = int(np.count_nonzero(seen[owned(kind, writer)] != expected))
        if lost:
            problem = f"writer {writer} round {round_}: {lost} of its elements lost their last update"
    assign(array, kind, writer, value(writer, round_))
    return problem


def run_writer(store: ZarrdbStore, kind: Kind, writer: int, rounds: int) -> list[str]:
    array = zarr.open_array(store, path="a")
    return [p for r in range(rounds) if (p := _round(array, kind, writer, r))]


def final_problems(store: ZarrdbStore, kind: Kind, rounds: int) -> list[str]:
    data = np.asarray(zarr.open_array(store, path="a", mode="r")[:])
    if kind == "block":
        tags = np.unique(data)
        last = {value(w, rounds - 1) for w in range(WRITERS)}
        if tags.size != 1 or int(tags[0]) not in last:
            return [f"final: the chunks hold {tags.tolist()}, not one writer's last assignment"]
        return []
    problems = []
    for writer in range(WRITERS):
        lost = int(np.count_nonzero(data[owned(kind, writer)] != value(writer, rounds - 1)))
        if lost:
            problems.append(f"final: {lost} elements of writer {writer} do not hold its last value")
    return problems


def open_store(path: str) -> ZarrdbStore:
    return ZarrdbStore(path)  # redb in its multi-process mode (the default)


def run_threads(path: str, kind: Kind, rounds: int) -> list[str]:
    """The four writers as threads of this process, on one store."""
    store = open_store(path)
    create(store)
    results: list[list[str]] = [[] for _ in range(WRITERS)]
    start = threading.Barrier(WRITERS)

    def writer(w: int) -> None:
        try:
            start.wait()
            results[w] = run_writer(store, kind, w, rounds)
        except Exception as e:  # a writer that failed is a problem to report, not a hang
            results[w] = [f"writer {w} failed: {e!r}"]

    pool = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return [p for r in results for p in r] + final_problems(store, kind, rounds)


def run_processes(path: str, kind: Kind, pipeline: bool, rounds: int, timeout: float = 120) -> list[str]:
    """The four writers as processes, each with a store of its own on the file."""
    store = open_store(path)
    create(store)
    workers = [
        subprocess.Popen(
            [sys.executable, __file__, path, kind, str(int(pipeline)), str(w), str(rounds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(WRITERS)
    ]
    problems: list[str] = []
    try:
        for worker in workers:
            assert worker.stdout is not None
            line = worker.stdout.readline()
            if line.strip() != "ready":
                _, err = worker.communicate(timeout=timeout)
                raise RuntimeError(f"a writer process failed to start: {line!r} {err}")
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
        for worker in workers:
            out, err = worker.communicate(timeout=timeout)
            if worker.returncode != 0:
                raise RuntimeError(f"a writer process failed: {err}")
            problems += json.loads(out.strip().splitlines()[-1])
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    return problems + final_problems(store, kind, rounds)


def main(argv: list[str]) -> int:
    path, kind, pipeline, writer, rounds = argv
    if pipeline == "1":
        zarr.config.set(PIPELINE)
    store = open_store(path)
    store.get_sync("zarr.json")  # open the database before saying ready
    print("ready", flush=True)
    sys.stdin.readline()
    problems = run_writer(store, kind, int(writer), int(rounds))  # type: ignore[arg-type]
    print(json.dumps(problems), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
