"""zarrdb's exceptions carry what the engine's errors know as attributes: a stable ``kind`` and
the ``key``, ``node``, ``path`` or ``operation`` involved, not only a message."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import zarr
from zarr.core.buffer import cpu

import zarrdb
from zarrdb import ZarrdbStore, _native


def test_missing_node_names_kind_and_node(tmp_path: Path) -> None:
    store = ZarrdbStore(tmp_path / "e.zarrdb")
    zarr.create_group(store)
    native = _native.Database.open(store.path, False).store()
    with pytest.raises(zarrdb.NodeError) as excinfo:
        native.open_array("/missing")
    assert excinfo.value.kind == "not_found"
    assert excinfo.value.node == "/missing"
    assert excinfo.value.key is None


def test_invalid_metadata_names_kind_and_key(tmp_path: Path) -> None:
    store = ZarrdbStore(tmp_path / "e.zarrdb")
    with pytest.raises(zarrdb.MetadataError) as excinfo:
        store.set_sync("a/zarr.json", cpu.Buffer.from_bytes(b'{"zarr_format": 3, "node_type": "array"}'))
    assert excinfo.value.kind == "invalid_metadata"
    assert excinfo.value.key == "a/zarr.json"


def test_invalid_key_names_kind_and_key(tmp_path: Path) -> None:
    store = ZarrdbStore(tmp_path / "e.zarrdb", validate_metadata=False)
    with pytest.raises(zarrdb.StoreError) as excinfo:
        store.set_sync("a/../b", cpu.Buffer.from_bytes(b"x"))
    assert excinfo.value.kind == "invalid_key"
    assert excinfo.value.key is not None and ".." in excinfo.value.key


def test_wrong_backend_names_kind_path_and_operation(tmp_path: Path) -> None:
    path = tmp_path / "e.zarrdb"
    ZarrdbStore(path).set_sync("k", cpu.Buffer.from_bytes(b"v"))
    with pytest.raises(zarrdb.OpenError) as excinfo:
        ZarrdbStore(path, backend="lmdb").get_sync("k")
    assert excinfo.value.kind == "wrong_backend"
    assert excinfo.value.operation == "open"
    assert excinfo.value.path is not None and excinfo.value.path.endswith("e.zarrdb")


def test_locked_by_another_process_names_kind_and_the_mode_mismatch(tmp_path: Path) -> None:
    path = tmp_path / "e.zarrdb"
    # Another process holds the file in the default (multi-process) mode until told to stop.
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
                import sys
                from zarr.core.buffer import cpu
                import zarrdb
                store = zarrdb.ZarrdbStore({str(path)!r})
                store.set_sync("k", cpu.Buffer.from_bytes(b"v"))
                print("ready", flush=True)
                sys.stdin.read()
                """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        with pytest.raises(zarrdb.LockedError) as excinfo:
            ZarrdbStore(path, durability="fast").get_sync("k")
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(60)
    assert excinfo.value.kind == "locked"
    assert excinfo.value.operation == "open"
    message = str(excinfo.value)
    assert "mode mismatch" in message and "single-process mode" in message and "multi-process" in message


def test_python_side_errors_answer_every_attribute() -> None:
    error = zarrdb.Error("raised by hand")
    assert (error.kind, error.key, error.node, error.path, error.operation) == ("other", None, None, None, None)
