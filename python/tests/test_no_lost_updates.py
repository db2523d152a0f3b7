"""Issue 41: no lost updates from any zarr-python write to a ``ZarrdbStore``, without a
transaction, on every kind of selection (basic, stepped, orthogonal, coordinate, block), between
threads and between processes, with zarrdb's import defaults ("plain") and with
``zarrdb.CodecPipeline`` named in zarr's configuration ("pipeline").

Four writers assign interleaved elements that share every chunk (``_selection_writer.py`` says
how); each checks every round that its previous assignment survived, and the final array must
hold every writer's last one. Block selections write whole chunks, so there the check is that
each assignment is atomic: every read shows one assignment in all chunks.

Each case runs ``ZARRDB_STRESS_RUNS`` times (default 1; the campaign of issue 41 ran 20), each
run ``ZARRDB_STRESS_ROUNDS`` rounds per writer (default 6), on a fresh database.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import zarr
from _selection_writer import KINDS, PIPELINE, Kind, run_processes, run_threads

RUNS = int(os.environ.get("ZARRDB_STRESS_RUNS", "1"))
ROUNDS = int(os.environ.get("ZARRDB_STRESS_ROUNDS", "6"))


@pytest.fixture(params=["plain", "pipeline"])
def configuration(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "pipeline":
        with zarr.config.set(PIPELINE):
            yield request.param
    else:
        yield request.param


@pytest.mark.parametrize("kind", KINDS)
def test_threads_lose_no_update(tmp_path: Path, kind: Kind, configuration: str) -> None:
    for run in range(RUNS):
        problems = run_threads(str(tmp_path / f"run{run}.zarrdb"), kind, ROUNDS)
        assert problems == [], f"run {run}"


@pytest.mark.parametrize("kind", KINDS)
def test_processes_lose_no_update(tmp_path: Path, kind: Kind, configuration: str) -> None:
    for run in range(RUNS):
        problems = run_processes(str(tmp_path / f"run{run}.zarrdb"), kind, configuration == "pipeline", ROUNDS)
        assert problems == [], f"run {run}"
