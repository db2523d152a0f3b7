"""A full disk reaches Python as ``zarrdb.DiskFullError`` (a ``StoreError``), through the
submitted sets of zarr-python's writes as through ``set_sync``, and the file keeps every chunk
written before.

redb latches an I/O failure and refuses every later call on its handle; the engine then opens the
file again by itself, so once space is freed the same store works again.

The disk is a 4 MiB tmpfs mounted for the test: it needs the right to mount (root, as in CI here)
and is skipped otherwise.
"""

from __future__ import annotations

import gc
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import zarr
from zarr.core.buffer import default_buffer_prototype

import zarrdb
from zarrdb import ZarrdbStore


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root?)")
    try:
        yield mount
    finally:
        gc.collect()  # the last handles on files in the mount
        # Lazily, so a handle a failed test left open cannot leave the mount behind.
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_zarr_writes_that_do_not_fit_raise_disk_full(small_disk: Path) -> None:
    path = small_disk / "full.zarrdb"
    store = ZarrdbStore(path)
    rng = np.random.default_rng(16)
    written = 0
    with pytest.raises(zarrdb.DiskFullError, match="is full"):
        for i in range(64):
            arr = zarr.create_array(store, name=f"a{i}", shape=(256, 256), chunks=(64, 64), dtype="uint8")
            arr[:] = rng.integers(0, 255, size=(256, 256), dtype="uint8")
            written = i + 1
    assert written > 0
    assert issubclass(zarrdb.DiskFullError, zarrdb.StoreError)
    # The handle is spent: drop everything that holds it, so the next open opens the file anew.
    store.close()
    del arr, store
    gc.collect()

    reader = ZarrdbStore(path, read_only=True)
    rng = np.random.default_rng(16)
    for i in range(written):
        expected = rng.integers(0, 255, size=(256, 256), dtype="uint8")
        np.testing.assert_array_equal(zarr.open_array(reader, path=f"a{i}", mode="r")[:], expected)


def test_set_sync_on_a_full_disk_raises_disk_full(small_disk: Path) -> None:
    store = ZarrdbStore(small_disk / "sync.zarrdb")
    value = default_buffer_prototype().buffer.from_bytes(np.random.default_rng(1).bytes(256 << 10))
    with pytest.raises(zarrdb.DiskFullError):
        for i in range(64):
            store.set_sync(f"k/{i}", value)


def test_the_same_store_works_again_once_space_is_freed(small_disk: Path) -> None:
    ballast = small_disk / "ballast"
    ballast.write_bytes(b"\1" * (1 << 20))
    store = ZarrdbStore(small_disk / "again.zarrdb")
    value = default_buffer_prototype().buffer.from_bytes(np.random.default_rng(2).bytes(256 << 10))
    written = 0
    with pytest.raises(zarrdb.DiskFullError):
        for i in range(64):
            store.set_sync(f"k/{i}", value)
            written = i + 1
    assert written > 0
    ballast.unlink()
    small = default_buffer_prototype().buffer.from_bytes(b"after the full disk")
    store.set_sync("after", small)
    assert store.get_sync("after").to_bytes() == b"after the full disk"
    for i in range(written):
        assert store.get_sync(f"k/{i}").to_bytes() == value.to_bytes()
