"""Issue 15, item 5: 8 threads and 4 processes write overlapping partial chunks of one array
through zarr-python (``arr[:, w::12] = v``, every chunk shared by all 12 writers), each write
inside ``store.transaction()``; no update is lost. Every writer checks, each round, that its
columns still hold what it wrote last (a lost update of any round shows there), and at the end
every element must hold its owner's last value.

That this could fail is shown by ``test_lost_update_interleaving.py``: the same read-modify-write
without a transaction loses an update under a forced interleaving.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _partial_writer import run_scenario


@pytest.mark.parametrize(
    ("backend", "rounds"),
    [
        ("redb", 6),
        # Lighter: LMDB's writer lock is the same guarantee through another engine.
        ("lmdb", 3),
    ],
)
def test_threads_and_processes_lose_no_partial_chunk_update(
    tmp_path: Path, backend: str, rounds: int
) -> None:
    path = str(tmp_path / f"shared.{backend}")
    outcome = run_scenario(path, backend, "transaction", threads=8, processes=4, rounds=rounds)
    assert outcome.problems == []


@pytest.mark.parametrize("backend", ["redb", "lmdb"])
def test_boxes_through_the_codec_pipeline_lose_no_update(tmp_path: Path, backend: str) -> None:
    """The same writers without transactions, each writing boxes (column pairs) through
    ``zarrdb.CodecPipeline``: the engine's region writes patch shared chunks inside their
    commits, so nothing is lost either."""
    path = str(tmp_path / f"shared.{backend}")
    outcome = run_scenario(path, backend, "pipeline", threads=8, processes=4, rounds=4)
    assert outcome.problems == []
