"""The Python store benchmark (python/bench/store_bench.py) runs end to end in quick mode.

It runs every store of the comparison in fresh processes, checks in each that the data read back
is the data written and that the array carries the workload's codecs, and reports positive
figures for each store. No timing is asserted: the figures belong in docs/benchmarks.md.
"""

import json
import math
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "store_bench.py"
STORES = {
    "zarrdb",
    "zarrdb_fast",
    "zarrdb_single",
    "zarrdb_pipeline",
    "zarrdb_cache1g",
    "zarrdb_pipeline_fast",
    "zarrdb_pipeline_cache1g",
    "local_sync",
    "local",
    "memory",
    "disk_sync",
}


def test_quick_bench_reports_every_store(tmp_path: Path) -> None:
    # One workload keeps the run short (each store costs two fresh interpreters); the other
    # shares every code path but the shape.
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--workload", "small_chunks", "--json", "--tmp", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["config"]["async.concurrency"] is not None
    workload = report["workloads"]["small_chunks"]
    assert set(workload["stores"]) == STORES
    for store, figures in workload["stores"].items():
        for figure in ("write_MBps", "read_MBps"):
            value = figures[figure]["median"]
            assert math.isfinite(value) and value > 0, (store, figure, value)
    # The temporary stores are removed.
    assert list(tmp_path.iterdir()) == []
