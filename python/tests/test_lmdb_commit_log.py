"""``ZarrdbStore(..., backend="lmdb", commit_log=True)``: LMDB behind zarrdb's commit log. The
folder is this process's alone while the store is open (another process gets
``zarrdb.LockedError``), the log's files go when the last store closes, and any opener reads
what was written. Crashes are in test_transaction_crash.py."""

from __future__ import annotations

import gc
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrdb
from zarrdb import ZarrdbStore


def _other_process(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


def test_writes_go_through_the_log_and_its_files_go_at_close(tmp_path: Path) -> None:
    path = tmp_path / "logged.lmdb"
    store = ZarrdbStore(path, backend="lmdb", commit_log=True)
    z = zarr.create_array(store, name="a", shape=(64, 64), chunks=(16, 16), dtype="int32")
    for i in range(4):
        z[i * 16 : (i + 1) * 16, :] = i + 1
    assert (path / "zarrdb-checkpoint").exists() and (path / "zarrdb-log").exists()
    del z
    store.close()
    del store
    gc.collect()
    assert not (path / "zarrdb-checkpoint").exists()
    assert not (path / "zarrdb-log").exists()

    # Opened without the log (and read-only), the data is all there.
    reader = ZarrdbStore(path, backend="lmdb", read_only=True)
    got = zarr.open_array(reader, path="a", mode="r")[:]
    expected = np.repeat(np.arange(1, 5, dtype="int32"), 16)[:, None] * np.ones((1, 64), dtype="int32")
    np.testing.assert_array_equal(got, expected)


def test_another_process_is_refused_while_the_log_is_open(tmp_path: Path) -> None:
    path = tmp_path / "alone.lmdb"
    store = ZarrdbStore(path, backend="lmdb", commit_log=True)
    zarr.create_group(store, attributes={"held": True})
    result = _other_process(f"""
        import zarrdb
        try:
            zarrdb.ZarrdbStore({str(path)!r}, backend="lmdb", read_only=True).get_sync("zarr.json")
        except zarrdb.LockedError as e:
            print("locked:", e)
        """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("locked:"), result.stdout
    store.close()
    del store
    gc.collect()

    # Closed: the other process opens it.
    result = _other_process(f"""
        import zarr, zarrdb
        print(zarr.open_group(zarrdb.ZarrdbStore({str(path)!r}, backend="lmdb"), mode="r").attrs["held"])
        """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


@pytest.mark.parametrize("backend", [None, "redb", "sled"])
def test_the_log_is_lmdb_s_option(tmp_path: Path, backend: str | None) -> None:
    with pytest.raises(ValueError, match="lmdb' only"):
        ZarrdbStore(tmp_path / "x", backend=backend, commit_log=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="True or False"):
        ZarrdbStore(tmp_path / "x", backend="lmdb", commit_log="yes")  # type: ignore[arg-type]


def test_a_pickled_store_keeps_the_log(tmp_path: Path) -> None:
    path = tmp_path / "p.lmdb"
    # Never opened: the unpickled store is the process's first opener of the path.
    store = ZarrdbStore(path, backend="lmdb", commit_log=True)
    again = pickle.loads(pickle.dumps(store))
    zarr.create_group(again, attributes={"k": 1})
    assert (path / "zarrdb-checkpoint").exists() and (path / "zarrdb-log").exists()
    again.close()


def test_locked_is_an_open_error() -> None:
    assert issubclass(zarrdb.LockedError, zarrdb.OpenError)
