"""Several processes on one redb file: by default (multi-process mode) a reader and a writer in
other processes work beside this one; with multi_process=False the second is refused with a typed
error."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from zarr.core.buffer import cpu, default_buffer_prototype

import zarrdb
from zarrdb import ZarrdbStore


def _other_process(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


async def test_second_process_is_refused_without_multi_process(tmp_path: Path) -> None:
    path = tmp_path / "single.zarrdb"
    store = await ZarrdbStore.open(path, multi_process=False)
    await store.set("k", cpu.Buffer.from_bytes(b"v"))
    result = _other_process(f"""
        import zarrdb
        try:
            zarrdb.ZarrdbStore({str(path)!r}, multi_process=False).get_sync("k")
        except zarrdb.LockedError as e:
            print("locked:", e)
        """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("locked:")
    assert issubclass(zarrdb.LockedError, zarrdb.OpenError)


@pytest.mark.parametrize("read_only", [True, False])
async def test_processes_share_a_file_in_multi_process_mode(tmp_path: Path, read_only: bool) -> None:
    path = tmp_path / "shared.zarrdb"
    # The default mode is multi-process: no flag needed.
    store = await ZarrdbStore.open(path)
    await store.set("from-parent", cpu.Buffer.from_bytes(b"1"))
    result = _other_process(f"""
        from zarr.core.buffer import cpu
        import zarrdb
        reader = zarrdb.ZarrdbStore({str(path)!r}, read_only=True)
        print(reader.get_sync("from-parent").to_bytes().decode())
        if not {read_only!r}:
            writer = reader.with_read_only(False)
            writer.set_sync("from-child", cpu.Buffer.from_bytes(b"2"))
        """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"
    child = await store.get("from-child", default_buffer_prototype())
    assert (child is None) if read_only else (child is not None and child.to_bytes() == b"2")
