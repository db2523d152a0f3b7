"""``zarrdb.CodecPipeline`` keeps the engine's handle on an array per store and uses it again
while the array's ``zarr.json`` is byte for byte the one it was opened from.

- An array made again by another process (another chunk shape and data type, so the chunks'
  bytes mean something else) is opened afresh: reads through a store that had read the old one,
  read-only or writable, return the new values. A handle kept past the change would decode the
  new chunks with the old metadata and return other values, or fail.
- The arrays a read-only store keeps do not keep its read-only handle: a writable store of the
  same process opens at once (``test_read_only_open.py`` checks that it then sees the commits).
"""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrdb
from zarrdb import ZarrdbStore


def _remake_in_child(path: Path) -> np.ndarray:
    """Array `a` erased and made again by another process: int16, chunks of 3, new values."""
    code = textwrap.dedent(f"""
        import numpy as np, zarr
        from zarrdb import ZarrdbStore
        store = ZarrdbStore({str(path)!r})
        a = zarr.create_array(store, name="a", shape=(20,), chunks=(3,), dtype="int16", overwrite=True)
        a[:] = np.arange(20, dtype="int16") * -7
        store.close()
        """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    return np.arange(20, dtype="int16") * -7


@pytest.mark.parametrize("read_only", [True, False], ids=["read_only", "writable"])
def test_an_array_made_again_elsewhere_is_opened_afresh(tmp_path: Path, read_only: bool) -> None:
    path = tmp_path / "reuse.zarrdb"
    writer = ZarrdbStore(path)
    first = zarr.create_array(writer, name="a", shape=(20,), chunks=(4,), dtype="float64")
    first[:] = np.linspace(0, 1, 20)
    writer.close()
    del writer, first
    gc.collect()

    store = ZarrdbStore(path, read_only=read_only)
    np.testing.assert_array_equal(zarr.open_array(store, path="a", mode="r")[:], np.linspace(0, 1, 20))
    # Read again: served by the array kept from the first read.
    np.testing.assert_array_equal(zarr.open_array(store, path="a", mode="r")[2:9], np.linspace(0, 1, 20)[2:9])
    expected = _remake_in_child(path)
    again = zarr.open_array(store, path="a", mode="r")
    assert again.dtype == np.dtype("int16") and again.chunks == (3,)
    np.testing.assert_array_equal(again[:], expected)
    np.testing.assert_array_equal(again[4:11], expected[4:11])
    store.close()


def test_kept_arrays_of_a_read_only_store_let_a_writable_store_open(tmp_path: Path) -> None:
    path = tmp_path / "upgrade.zarrdb"
    writer = ZarrdbStore(path)
    zarr.create_array(writer, name="a", shape=(8,), chunks=(4,), dtype="int32")[:] = np.arange(8)
    writer.close()
    del writer
    gc.collect()

    reader = ZarrdbStore(path, read_only=True)
    kept = zarr.open_array(reader, path="a", mode="r")
    np.testing.assert_array_equal(kept[:], np.arange(8))
    assert reader._arrays, "the read kept no array: this test checks nothing"
    started = time.monotonic()
    writable = reader.with_read_only(False)
    zarr.open_array(writable, path="a")[1:3] = [70, 80]
    # The writable open waits up to 10 s for a read-only handle still in use, then fails.
    assert time.monotonic() - started < 5
    np.testing.assert_array_equal(kept[:], [0, 70, 80, 3, 4, 5, 6, 7])
    for store in (reader, writable):
        store.close()


def test_an_array_made_again_meanwhile_is_refused_not_kept(tmp_path: Path) -> None:
    """An array kept by a read-only store, let go by an upgrade and made again with other
    metadata before its next use, refuses that use (kind "changed") rather than reading the new
    chunks with the old metadata; and an open told the document read before refuses an array
    that no longer matches it."""
    path = tmp_path / "changed.zarrdb"
    writer = ZarrdbStore(path)
    zarr.create_array(writer, name="a", shape=(20,), chunks=(4,), dtype="float64")[:] = np.linspace(0, 1, 20)
    writer.close()
    del writer
    gc.collect()

    reader = ZarrdbStore(path, read_only=True)
    np.testing.assert_array_equal(zarr.open_array(reader, path="a", mode="r")[:], np.linspace(0, 1, 20))
    old_document, kept = reader._arrays["/a"]
    assert kept is not None
    _remake_in_child(path)
    writable = reader.with_read_only(False)
    writable._handle()  # the upgrade: the kept array lets the read-only handle go
    out = np.empty(20, dtype="float64")
    with pytest.raises(zarrdb.NodeError) as refused:
        kept.read_region_into([0], [20], out.view(np.uint8))
    assert refused.value.kind == "changed" and refused.value.node == "/a"
    with pytest.raises(zarrdb.NodeError) as stale:
        writable._handle().open_array("/a", old_document)
    assert stale.value.kind == "changed"
    # Through zarr-python, the store reads what is there now.
    np.testing.assert_array_equal(zarr.open_array(reader, path="a", mode="r")[:], np.arange(20, dtype="int16") * -7)
    for store in (reader, writable):
        store.close()
