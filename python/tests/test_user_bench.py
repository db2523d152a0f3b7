"""The users' comparison (python/bench/user_bench.py) runs end to end in quick mode.

Each store writes its chunks one by one and an xarray dataset in fresh processes, which check
that what they read back is what was written; a fresh process reopens and loads the dataset and
compares it with the dataset written. No timing is asserted (the figures belong in
docs/benchmarks.md); the space figures must be real lengths. A peer whose package is not
installed is reported as skipped with the reason, never as a figure.
"""

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "user_bench.py"


def test_quick_user_bench_reports_each_store(tmp_path: Path) -> None:
    stores = ["zarrdb", "local", "icechunk"]
    command = [sys.executable, str(BENCH), "--quick", "--json", "--tmp", str(tmp_path)]
    for store in stores:
        command += ["--store", store]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    ran = set(report["seconds"])
    skipped = set(report["skipped"])
    assert ran | skipped == set(stores) and not ran & skipped
    assert {"zarrdb", "local"} <= ran
    assert ("icechunk" in ran) == (importlib.util.find_spec("icechunk") is not None)
    for store in ran:
        for workload in ("chunks", "to_zarr", "open_load"):
            value = report["seconds"][store][workload]["median"]
            assert math.isfinite(value) and value > 0, (store, workload, value)
        for workload in ("chunks", "to_zarr"):
            space = report["space"][store][workload]
            assert space["stored_bytes"] > 0 and space["disk_bytes"] > 0, (store, workload, space)
    # The temporary stores are removed.
    assert list(tmp_path.iterdir()) == []
