"""The history benchmark against icechunk (benches/peers/history_icechunk.py) runs end to end with
tiny sizes: every measurement reports figures for both targets, and in its concurrent part
zarrdb loses no commit. Whatever icechunk loses there is what the benchmark reports, not a test
failure. No timing is asserted: the figures belong in docs/benchmarks.md."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("icechunk")

BENCH = Path(__file__).resolve().parents[2] / "benches" / "peers" / "history_icechunk.py"


def run(tmp_path: Path, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(BENCH), *args, "--json", "--tmp", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # The stores are removed.
    assert list(tmp_path.iterdir()) == []
    return json.loads(done.stdout)


def test_every_measurement_for_both_targets(tmp_path: Path) -> None:
    report = run(
        tmp_path, "--runs", "1", "--reps", "1", "--chunks", "40", "--chunk-len", "16",
        "--gc-chunks", "20", "--gc-commits", "4",
    )
    results = report["results"]
    for name in ("commit_big", "commit_small", "tag", "read_tag", "diff", "gc_expire", "gc_collect"):
        for target in ("zarrdb", "icechunk"):
            figures = results[name][target]
            median = figures["median"]
            assert figures["n"] >= 1 and math.isfinite(median) and median > 0, (name, target)
    for name in ("commit_big", "commit_small", "tag"):
        assert results[name]["zarrdb-fast"]["n"] >= 1
    assert results["gc_compact"]["zarrdb"]["n"] == 1
    for target in ("zarrdb", "icechunk"):
        [gc] = report["details"]["gc"][target]
        # Expiry keeps the head (icechunk also keeps the root snapshot it never expires).
        assert gc["after"]["versions"] < gc["before"]["versions"]


def test_concurrent_commits(tmp_path: Path) -> None:
    report = run(tmp_path, "concurrent", "--commits", "5", "--trials", "1", "--start-delay", "1")
    zarrdb = report["totals"]["zarrdb"]
    assert zarrdb["attempted"] == zarrdb["reported_ok"] == 10
    assert (zarrdb["lost_commits"], zarrdb["lost_updates"], zarrdb["lost_cells"]) == (0, 0, 0)
    assert zarrdb["error_kinds"] == []
    icechunk = report["totals"]["icechunk"]
    assert icechunk["attempted"] == 10
    for key in ("reported_ok", "lost_commits", "lost_updates", "lost_cells"):
        assert isinstance(icechunk[key], int)
