"""``ZarrdbStore(path, read_only=True)`` opens the database read-only in the engine, as the CLI's
read-only commands do: reading never writes its files (bytes, length and modification time stay
as they were, on redb, LMDB and sled), it reads on a read-only bind mount, and it reads a database
whose writer was killed on a full disk, where any write would fail.

Before, a read-only store opened the database for writing and only refused writes itself: a
read changed the file, a read-only mount failed with "Read-only file system" and, after the crash
on a full disk, the open failed with ENOSPC.

Mounting needs root (as in CI here); those tests are skipped otherwise.
"""

from __future__ import annotations

import gc
import hashlib
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrdb
from zarrdb import ZarrdbStore

BACKENDS = ["redb", "lmdb", "sled"]


def _files(path: Path) -> dict[str, tuple[str, int, int]]:
    """Every file of the database (a file, or a folder's files) with its hash, length and
    modification time; LMDB's lock file, which readers use, is left out."""
    paths = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    out = {}
    for p in paths:
        if p.name == "lock.mdb":
            continue
        st = p.stat()
        out[str(p.relative_to(path.parent))] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_size, st.st_mtime_ns)
    # The database itself, for a file beside it (redb's commit log) appearing or going.
    out["<listing>"] = (str(sorted(os.listdir(path.parent))), 0, 0)
    return out


def _settled(path: Path) -> dict[str, tuple[str, int, int]]:
    """The files once the writer's background work is over (sled writes for a moment after its
    last handle closes)."""
    last = _files(path)
    for _ in range(50):
        time.sleep(0.1)
        now = _files(path)
        if now == last:
            return now
        last = now
    raise AssertionError(f"{path}: the files keep changing")


def _build(path: Path, backend: str) -> np.ndarray:
    values = np.arange(60, dtype="int32").reshape(6, 10)
    store = ZarrdbStore(path, backend=backend)  # type: ignore[arg-type]
    arr = zarr.create_array(store, name="a", shape=values.shape, chunks=(4, 4), dtype="int32")
    arr[:] = values
    store.close()
    del arr, store
    gc.collect()
    return values


def _read_in_child(path: Path, backend: str, **extra: object) -> np.ndarray:
    """The array `a` read in a new process through a read-only store (no handle of this process
    is shared)."""
    code = textwrap.dedent(f"""
        import sys, numpy as np, zarr
        import zarrdb
from zarrdb import ZarrdbStore
        store = ZarrdbStore({str(path)!r}, backend={backend!r}, read_only=True, **{extra!r})
        np.save(sys.stdout.buffer, zarr.open_array(store, path="a", mode="r")[:])
        """)
    code = "\n".join(line.strip() for line in code.splitlines())
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    import io

    return np.load(io.BytesIO(done.stdout))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_read_only_open_leaves_the_files_byte_identical(tmp_path: Path, backend: str) -> None:
    path = tmp_path / f"data.{backend}"
    values = _build(path, backend)
    before = _settled(path)
    np.testing.assert_array_equal(_read_in_child(path, backend), values)
    assert _settled(path) == before
    # In this process too, through zarr-python's own read-only opening.
    store = ZarrdbStore(path, backend=backend, read_only=True)  # type: ignore[arg-type]
    np.testing.assert_array_equal(zarr.open_array(store, path="a", mode="r")[:], values)
    with pytest.raises(ValueError):
        store.set_sync("x", zarr.core.buffer.cpu.Buffer.from_bytes(b"1"))
    store.close()
    del store
    gc.collect()
    assert _settled(path) == before


def test_single_process_mode_too(tmp_path: Path) -> None:
    """redb's single-process mode compacts the file at close and keeps a log beside it while
    open; a read-only store does neither."""
    path = tmp_path / "single.zarrdb"
    values = _build(path, "redb")
    before = _settled(path)
    np.testing.assert_array_equal(_read_in_child(path, "redb", multi_process=False), values)
    assert _settled(path) == before


@pytest.mark.parametrize(
    "backend, extra",
    [("redb", {}), ("redb", {"multi_process": False}), ("lmdb", {}), ("lmdb", {"commit_log": True}), ("sled", {})],
)
def test_a_writable_store_beside_a_read_only_one_in_the_same_process(
    tmp_path: Path, backend: str, extra: dict[str, object]
) -> None:
    """A read-only store opened first holds a read-only handle; a writable store of the same
    process then replaces it with a writable one (the handles of one process exclude each other
    on redb's single-process mode and LMDB), and the read-only store reads through it from then
    on, seeing its commits. Nothing is lost, and a read-only store opened after a writable one
    shares the writer's handle."""
    path = tmp_path / f"both.{backend}"
    values = _build(path, backend)
    reader = ZarrdbStore(path, backend=backend, read_only=True, **extra)  # type: ignore[arg-type]
    np.testing.assert_array_equal(zarr.open_array(reader, path="a", mode="r")[:], values)
    writer = reader.with_read_only(False)
    zarr.open_array(writer, path="a")[0, 0] = 99
    values[0, 0] = 99
    np.testing.assert_array_equal(zarr.open_array(reader, path="a", mode="r")[:], values)
    with pytest.raises(ValueError):
        reader.set_sync("x", zarr.core.buffer.cpu.Buffer.from_bytes(b"1"))
    later = ZarrdbStore(path, backend=backend, read_only=True, **extra)  # type: ignore[arg-type]
    zarr.open_array(writer, path="a")[1, 1] = 98
    values[1, 1] = 98
    np.testing.assert_array_equal(zarr.open_array(later, path="a", mode="r")[:], values)
    for store in (reader, writer, later):
        store.close()
    del reader, writer, later, store
    gc.collect()
    np.testing.assert_array_equal(_read_in_child(path, backend, **extra), values)


def test_writers_of_other_processes_go_on_beside_a_read_only_store(tmp_path: Path) -> None:
    """In redb's multi-process mode (the default) a read-only store takes redb's shared reader:
    writers in other processes commit while it is open, and it reads their commits."""
    path = tmp_path / "shared.zarrdb"
    values = _build(path, "redb")
    reader = ZarrdbStore(path, read_only=True)
    np.testing.assert_array_equal(zarr.open_array(reader, path="a", mode="r")[:], values)
    code = "\n".join([
        "import sys, zarr",
        "from zarrdb import ZarrdbStore",
        "zarr.open_array(ZarrdbStore(sys.argv[1]), path='a')[2, 2] = 77",
    ])
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    values[2, 2] = 77
    np.testing.assert_array_equal(zarr.open_array(reader, path="a", mode="r")[:], values)
    reader.close()


def _mount(args: list[str]) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A folder and a read-only bind mount of it."""
    data, mounted = tmp_path / "data", tmp_path / "ro"
    data.mkdir()
    mounted.mkdir()
    if not _mount(["--bind", str(data), str(mounted)]):
        pytest.skip("cannot bind-mount here (not root?)")
    try:
        assert _mount(["-o", "remount,bind,ro", str(mounted)]), "cannot make the bind mount read-only"
        yield data, mounted
    finally:
        gc.collect()
        subprocess.run(["umount", "-l", str(mounted)], check=False)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reads_on_a_read_only_mount(read_only_mount: tuple[Path, Path], backend: str) -> None:
    data, mounted = read_only_mount
    values = _build(data / "db", backend)
    before = _settled(data / "db")
    with pytest.raises(OSError):
        (mounted / "probe").write_bytes(b"x")
    np.testing.assert_array_equal(_read_in_child(mounted / "db", backend), values)
    store = ZarrdbStore(mounted / "db", backend=backend, read_only=True)  # type: ignore[arg-type]
    np.testing.assert_array_equal(zarr.open_array(store, path="a", mode="r")[:], values)
    store.close()
    del store
    gc.collect()
    assert _settled(data / "db") == before


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    if not _mount(["-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)]):
        pytest.skip("cannot mount a tmpfs here (not root?)")
    try:
        yield mount
    finally:
        gc.collect()
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _check_and_close(store: ZarrdbStore, written: int) -> None:
    """The first `written` arrays the full-disk writer wrote, read through `store`, then closed."""
    rng = np.random.default_rng(16)
    for i in range(written):
        expected = rng.integers(0, 255, size=(256, 256), dtype="uint8")
        np.testing.assert_array_equal(zarr.open_array(store, path=f"a{i}", mode="r")[:], expected)
    store.close()


def _fill(disk: Path) -> None:
    """Fill what room is left on `disk` with a file of its own."""
    fd = os.open(disk / "ballast", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\1" * 4096) > 0:
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


# Writes arrays until the disk is full, prints how many it wrote, and dies by SIGKILL with the
# database open (and the disk still full): the next open finds a crashed writer's files. With
# "log" as its last argument it first sets aside a reserve, frees it once the disk is full, and
# makes ten small acknowledged sets, which redb's single-process mode makes durable as records
# in its commit log beside the file (not yet in the file), and prints how many it made too.
_WRITE_UNTIL_FULL = """
import os, signal, sys, numpy as np, zarr, zarrdb
from zarr.core.buffer import cpu
with_log = sys.argv[4] == "log"
reserve = sys.argv[1] + ".reserve"
if with_log:
    with open(reserve, "wb") as f:
        f.write(b"\\0" * (512 << 10))
store = zarrdb.ZarrdbStore(sys.argv[1], backend=sys.argv[2], multi_process=sys.argv[3] == "1")
rng = np.random.default_rng(16)
written = 0
try:
    for i in range(64):
        arr = zarr.create_array(store, name=f"a{i}", shape=(256, 256), chunks=(64, 64), dtype="uint8")
        arr[:] = rng.integers(0, 255, size=(256, 256), dtype="uint8")
        written = i + 1
except zarrdb.DiskFullError:
    pass
logged = 0
if with_log:
    os.remove(reserve)
    for k in range(10):
        store.set_sync(f"small/{k}", cpu.Buffer.from_bytes(f"value {k}".encode()))
        logged = k + 1
print(written, logged, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("backend, multi_process", [("redb", True), ("redb", False), ("lmdb", False)])
def test_reads_after_a_crash_on_a_full_disk(small_disk: Path, backend: str, multi_process: bool) -> None:
    path = small_disk / "full.db"
    done = subprocess.run(
        [sys.executable, "-c", _WRITE_UNTIL_FULL, str(path), backend, "1" if multi_process else "0", "-"],
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == -9, done.stderr.decode()
    written = int(done.stdout.split()[0])
    assert written > 0
    # The disk stays full: nothing may be written, and nothing is.
    _fill(small_disk)
    before = _files(path)
    store = ZarrdbStore(path, backend=backend, read_only=True, multi_process=multi_process)  # type: ignore[arg-type]
    _check_and_close(store, written)
    del store
    gc.collect()
    assert _files(path) == before


def test_reads_commit_log_records_after_a_crash_on_a_full_disk(small_disk: Path) -> None:
    """The acknowledged commits a killed single-process writer left only in its commit log are
    read by a read-only store (replayed in memory), on a disk that stays full, and nothing is
    written: the file and the log stay byte-identical."""
    path = small_disk / "logged.db"
    done = subprocess.run(
        [sys.executable, "-c", _WRITE_UNTIL_FULL, str(path), "redb", "0", "log"], capture_output=True, timeout=300
    )
    assert done.returncode == -9, done.stderr.decode()
    written, logged = (int(n) for n in done.stdout.split())
    assert written > 0 and logged == 10
    logs = [p for p in small_disk.iterdir() if p.name.startswith(path.name) and p != path]
    assert logs, f"no commit log beside the database: {sorted(os.listdir(small_disk))}"
    _fill(small_disk)
    before = {p.name: _files(p) for p in [path, *logs]}
    store = ZarrdbStore(path, read_only=True, multi_process=False)
    for k in range(logged):
        value = store.get_sync(f"small/{k}")
        assert value is not None and value.to_bytes() == f"value {k}".encode(), k
    _check_and_close(store, written)
    del store
    gc.collect()
    assert {p.name: _files(p) for p in [path, *logs]} == before
