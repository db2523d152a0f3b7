"""One database reached through a symlink or a hard link is one database (issue 40).

A child process opens ``link.zarrdb`` (a symlink, or a hard link, to ``real.zarrdb``) with
``multi_process=False`` (redb's single-process mode, whose durable commits go to a commit log
beside the file) or as LMDB behind its commit log, makes acknowledged assignments and is killed
with SIGKILL. Then, through ``real.zarrdb``: every acknowledged assignment is there; one more
write; then through the link again: nothing is lost (``a[1]`` keeps the newer value) and
``zarrdb check`` finds nothing wrong. Once, this lost the ten assignments (they sat in a log named
after the link) and then replayed that old log over the newer write.

``ZARRDB_KILLS`` sets the campaign's length (default 3 per case; the first kill comes right after
the tenth acknowledgement, the others at a random point).
"""

from __future__ import annotations

import gc
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zarr

from zarrdb import ZarrdbStore
from zarrdb_cli import cli

KILLS = int(os.environ.get("ZARRDB_KILLS", "3"))
SLOTS = 10

# Assigns a[k % 10] = k for k = 1, 2, ... through the path it is given, printing k once each
# assignment has returned (acknowledged, durable), until it is killed.
_WRITER = """
import sys, zarr
from zarrdb import ZarrdbStore
path, backend = sys.argv[1], sys.argv[2]
extra = {"multi_process": False} if backend == "redb" else {"commit_log": True}
arr = zarr.open_array(ZarrdbStore(path, backend=backend, **extra), path="a")
k = int(sys.argv[3])
while True:
    k += 1
    arr[k % 10] = k
    print(k, flush=True)
"""


def _store(path: Path, backend: str) -> ZarrdbStore:
    if backend == "redb":
        return ZarrdbStore(path, backend="redb", multi_process=False)
    return ZarrdbStore(path, backend="lmdb", commit_log=True)


def _read(path: Path, backend: str) -> np.ndarray:
    store = _store(path, backend)
    values = zarr.open_array(store, path="a")[:]
    store.close()
    del store
    gc.collect()
    return values


def _write(path: Path, backend: str, index: int, value: int) -> None:
    store = _store(path, backend)
    zarr.open_array(store, path="a")[index] = value
    store.close()
    del store
    gc.collect()


def _kill_after(link: Path, backend: str, start: int, acks: int) -> int:
    """Run the writer through `link` from `start`, SIGKILL it once it has acknowledged `acks`
    assignments; the last number it acknowledged (it may have committed more before the kill)."""
    child = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(link), backend, str(start)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    last = start
    try:
        for _ in range(acks):
            line = child.stdout.readline()
            if not line:
                child.wait(timeout=60)
                raise AssertionError(f"the writer ended: {child.stderr.read() if child.stderr else ''}")
            last = int(line)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    return last


def _linked(tmp_path: Path, backend: str, link_kind: str) -> tuple[Path, Path]:
    real, link = tmp_path / "real.zarrdb", tmp_path / "link.zarrdb"
    store = _store(real, backend)
    zarr.create_array(store, name="a", shape=(SLOTS,), chunks=(2,), dtype="int64", fill_value=0)
    store.close()
    del store
    gc.collect()
    if link_kind == "symlink":
        link.symlink_to(real)
    else:
        os.link(real, link)
    return real, link


@pytest.mark.parametrize(
    "backend, link_kind", [("redb", "symlink"), ("redb", "hardlink"), ("lmdb", "symlink")]
)
def test_a_killed_writer_through_a_link_loses_nothing(tmp_path: Path, backend: str, link_kind: str) -> None:
    real, link = _linked(tmp_path, backend, link_kind)
    rng = random.Random(40)
    expected = np.zeros(SLOTS, dtype="int64")
    start = 0
    for kill in range(KILLS):
        acks = SLOTS if kill == 0 else rng.randint(1, 3 * SLOTS)
        acked = _kill_after(link, backend, start, acks)
        seen = _read(real, backend)
        # The writer runs on between its last acknowledgement and the kill landing (its printed
        # lines wait in the pipe), so any number of later assignments may have committed too; the
        # newest committed one is the largest value seen. What is seen must be exactly the state
        # after assignments start+1 .. last, for some last no earlier than the acknowledged one.
        last = max(acked, int(seen.max()))
        for k in range(start + 1, last + 1):
            expected[k % SLOTS] = k
        np.testing.assert_array_equal(
            seen, expected, err_msg=f"kill {kill}: read through {real.name} (acknowledged {acked})"
        )
        # A newer write through the real name, then the link again: the newer value stays.
        newer = last + 1000
        _write(real, backend, 1, newer)
        expected[1] = newer
        np.testing.assert_array_equal(_read(link, backend), expected, err_msg=f"kill {kill}: through the link")
        start = newer
    check = subprocess.run([cli(), "check", str(real)], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
