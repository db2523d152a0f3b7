"""The `zarrdb` CLI binary for tests that check files with it.

It is the one cargo built: ZARRDB_CLI when set, else the newest target/{release,debug}/zarrdb."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def cli() -> str:
    """The path of the binary; the test fails when there is none."""
    if os.environ.get("ZARRDB_CLI"):
        return os.environ["ZARRDB_CLI"]
    built = [p for p in (REPO / "target/release/zarrdb", REPO / "target/debug/zarrdb") if p.exists()]
    if not built:
        pytest.fail("no zarrdb CLI binary: run `cargo build` first or set ZARRDB_CLI")
    return str(max(built, key=lambda p: p.stat().st_mtime))


def run_cli(*args: str) -> str:
    """Run `zarrdb ARGS...`, assert it succeeded, and return its standard output."""
    result = subprocess.run([cli(), *args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout
