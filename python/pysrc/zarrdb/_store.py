"""``ZarrdbStore``: zarr-python's ``Store`` contract over a zarrdb database.

The engine does the work (``zarrdb._native``, a thin binding over the Rust library); this module
only adapts it to zarr-python: argument checks, read-only refusal, lazy opening, and where each
engine call runs. The GIL is released inside every engine call. Small reads run on the calling
thread, even on the event loop, and large ones in a worker thread (``_placement`` says why and how
they are told apart). Calls that can wait (writes wait for the writer lock and the fsync; listings
walk many keys) run in a worker thread of this module's pool (``_in_worker``), so concurrent
writes are in flight together and share one commit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import datetime
import itertools
import os
import threading
import weakref
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from typing import Any, Literal, NamedTuple

from zarr.abc.store import (
    ByteRequest,
    OffsetByteRequest,
    RangeByteRequest,
    Store,
    SuffixByteRequest,
)
from zarr.core.buffer import Buffer, BufferPrototype, default_buffer_prototype

from . import _native
from ._errors import TransactionClosedError, error
from ._placement import Range, ReadPlacement
from ._staging import StagedWrite

__all__ = ["ZarrdbStore"]

Backend = Literal["redb", "lmdb", "sled", "bucket"]
Durability = Literal["durable", "fast"]

_BACKENDS = ("redb", "lmdb", "sled", "bucket")
_DURABILITIES = ("durable", "fast")

# Calls that wait (writes: the writer lock and the fsync) run on threads of their own rather than
# the event loop's default executor, which has only cpu_count + 4 threads and is shared with
# zarr-python's codecs: zarr-python issues up to `async.concurrency` writes at once, and group
# commit can only batch the writes that are in flight together. Threads start on demand.
_POOL_THREADS = 32
_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_pid = -1
_pool_lock = threading.Lock()


def _worker_pool() -> concurrent.futures.ThreadPoolExecutor:
    global _pool, _pool_pid
    with _pool_lock:
        # A forked child inherits the pool object but not its threads: it needs a pool of its own.
        if _pool is None or _pool_pid != os.getpid():
            _pool = concurrent.futures.ThreadPoolExecutor(_POOL_THREADS, thread_name_prefix="zarrdb")
            _pool_pid = os.getpid()
        return _pool


async def _in_worker(function: Any, *args: Any) -> Any:
    """``function(*args)`` on a thread of the pool, awaited without blocking the event loop.

    The worker holds nothing of the call once the caller resumes: not ``function`` and ``args``,
    which the pool's work item keeps until after the result is delivered, and not the result,
    which the pool's worker keeps in a local until the same moment and its future keeps for as
    long as it lives. A database handle held there (an array's, the store's own) would keep the
    database open past ``close()``, so that another process opening it right away is refused as
    "another handle has it open". The result therefore travels in a box the caller empties."""
    held = [function, args]
    box: list[Any] = []

    def call() -> None:
        fn, fn_args = held
        held.clear()
        try:
            box.append(fn(*fn_args))
        finally:
            del fn, fn_args

    await asyncio.get_running_loop().run_in_executor(_worker_pool(), call)
    return box.pop()


# Sets of values up to this size are submitted to the database's committer thread, which posts
# their outcomes back to the loop (`python/src/submit.rs`); larger ones go to a worker thread,
# since a submit copies the value while holding the GIL and, beyond this size, the copy costs
# more than the hop saves.
SUBMIT_BYTES = 256 << 10


class _LoopCompletions:
    """One event loop's submitted sets: their futures by token, settled when the committer
    thread posts outcomes to ``native`` (the loop watches its descriptor)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.native = _native.Completions()
        self.futures: dict[int, asyncio.Future[None]] = {}
        self._tokens = itertools.count()
        # Raises NotImplementedError on loops that cannot watch a descriptor.
        loop.add_reader(self.native.fileno(), self._drain)

    def expect(self, loop: asyncio.AbstractEventLoop) -> tuple[int, asyncio.Future[None]]:
        token = next(self._tokens)
        future = loop.create_future()
        self.futures[token] = future
        return token, future

    def forget(self, token: int) -> None:
        self.futures.pop(token, None)

    def _drain(self) -> None:
        for token, error in self.native.drain():
            future = self.futures.pop(token, None)
            if future is None or future.cancelled():
                continue
            if error is None:
                future.set_result(None)
            else:
                future.set_exception(error)


# Keyed weakly: the completions of a loop go with it. None marks a loop that cannot watch a
# descriptor (its sets use the worker threads).
_loop_completions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopCompletions | None] = (
    weakref.WeakKeyDictionary()
)


def _completions(loop: asyncio.AbstractEventLoop) -> _LoopCompletions | None:
    try:
        return _loop_completions[loop]
    except KeyError:
        pass
    try:
        completions: _LoopCompletions | None = _LoopCompletions(loop)
    except NotImplementedError:
        completions = None
    _loop_completions[loop] = completions
    return completions


# The databases (by real path) with a transaction open in this context: the block of a
# `transaction()` / `atransaction()` and everything it calls, including zarr-python's synchronous
# API, whose coroutines run on zarr's loop thread in a copy of the caller's context
# (`asyncio.run_coroutine_threadsafe` captures it). A write there through another store of the
# same database would wait for the writer lock that the block itself holds: refused at once.
_open_transactions: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "zarrdb_open_transactions", default=frozenset()
)

# The scheme of `str(store)`, which `ZarrdbStore(...)` and `xr.open_dataset(..., engine="zarrdb")`
# take back.
SCHEME = "zarrdb://"


# A bucket database's locator starts with this (`zarrdb+s3://bucket/prefix`, or
# `zarrdb+memory://name` in one process): it names no file, so it is kept as given.
LOCATOR_PREFIX = "zarrdb+"


def _strip_scheme(path: str | os.PathLike[str]) -> str:
    text = os.fspath(path)
    return text[len(SCHEME) :] if isinstance(text, str) and text.startswith(SCHEME) else text


def is_locator(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a bucket database's locator (``zarrdb+s3://...``,
    ``zarrdb+memory://...``) rather than a file or folder."""
    text = os.fspath(path)
    return isinstance(text, str) and text.startswith(LOCATOR_PREFIX)


def _engine_range(byte_range: ByteRequest | None) -> Range:
    if byte_range is None:
        return None
    if isinstance(byte_range, RangeByteRequest):
        return (byte_range.start, max(byte_range.end - byte_range.start, 0))
    if isinstance(byte_range, OffsetByteRequest):
        return (byte_range.offset, None)
    if isinstance(byte_range, SuffixByteRequest):
        return (None, byte_range.suffix)
    raise TypeError(f"Unexpected byte_range, got {byte_range}.")


def _buffer(value: _native.Value | None, prototype: BufferPrototype) -> Buffer | None:
    """An engine value as zarr-python's buffer (wrapping it, not copying), None when absent."""
    return None if value is None else prototype.buffer.from_bytes(value)


def _as_bytes(value: Buffer, method: str) -> bytes:
    if not isinstance(value, Buffer):
        raise TypeError(
            f"ZarrdbStore.{method}(): `value` must be a Buffer instance. "
            f"Got an instance of {type(value)} instead."
        )
    return value.to_bytes()


class ZarrdbStore(Store):
    """A zarr-python store over one zarrdb database (by default a single redb file).

    Every write outside a transaction is one atomic, durable commit. ``transaction()`` groups
    writes into one atomic commit and ``snapshot()`` gives a read-only view of one commit.

    Parameters
    ----------
    path
        The database: a file for redb (the default), a folder for lmdb and sled, or a bucket
        database's locator, ``zarrdb+s3://bucket/prefix`` (``zarrdb+memory://name``: in this
        process's memory), which many processes on many machines write at once (the S3 client
        reads ``AWS_ENDPOINT``, ``AWS_REGION``, ``AWS_ACCESS_KEY_ID``, ... from the
        environment). It is created on first use unless ``read_only``; a read-only store on a
        path holding nothing reads as empty (as ``LocalStore`` does on a missing folder).
    read_only
        Refuse writes with ``ValueError``.
    backend
        ``"redb"`` (default), ``"lmdb"`` or ``"sled"``; a locator's is ``"bucket"`` (leave it
        unset).
    durability
        ``"durable"`` (default: each commit is fsynced before it returns) or ``"fast"`` (a crash
        may lose the last commits, never consistency). Stores of one process on one path share
        one open database, whose durability is the first opener's.
    multi_process
        redb only: open the file in redb's multi-writer mode, so several processes that all open
        it so can read and write it at once (dask's process scheduler, a reader process beside a
        writer). Commits are then always durable. The default (``None``) is on, except with
        ``durability="fast"``, which needs the single-process mode. Off, the first process locks
        the file and any other gets ``zarrdb.LockedError`` (small-chunk writes are about a quarter
        faster: docs/benchmarks.md).
    validate_metadata
        Check every ``zarr.json`` written as the engine checks documents (``zarrdb.MetadataError``
        for a document it cannot read, ``zarrdb.NodeError`` for a node inside an array), and
        serve consolidated metadata computed afresh on each read instead of storing a copy that
        later writes would make stale. On by default; off, every key is plain bytes (what
        zarr-python's store conformance suite expects of a key/value store).
    cache_size
        redb only: the bytes of redb's page cache (default 64 MiB). A larger cache keeps more of
        the file in the process between reads of the same data; a fresh process reading an
        array once is faster with a small one, which recycles its memory (docs/python.md). Like
        the durability, the first opener's size holds for every store of the process on the path.
    commit_log
        LMDB only: run LMDB behind zarrdb's commit log. A durable commit then syncs one small
        record instead of LMDB's data and meta pages (one writer's small commits are about 1.5
        times as fast: docs/benchmarks.md), but the database folder is held by this process
        alone: another process that opens it gets ``zarrdb.LockedError`` until this one closes
        it. A crash is recovered by the next open, with or without the log.
    history
        Create the database keeping history: every commit becomes a version that can be read
        later (``version=``), listed (``log()``) and tagged (``tag()``). It applies when the
        database is created (or holds no data yet); a database that keeps history keeps it
        whatever this says.
    version
        Read one version of a database that keeps history instead of its latest state: a tag, a
        commit id (16 hexadecimal digits) or ``"main"``. The store is read-only and does not
        change while writers commit. It reopens by name when pickled (dask's processes).
    as_of
        Read the newest version made at or before this time (a ``datetime``, or seconds since
        the Unix epoch); read-only like ``version``.
    branch
        Read and write branch ``branch`` of a database that keeps history instead of
        ``"main"``: its head is what the store reads, and every write, ``transaction()`` and
        ``restore()`` commits to it, while ``main`` (what other Zarr tools read) stays as it
        is until ``merge()``. ``zarrdb.HistoryError`` (kind "not_found") when the database has
        no such branch (``create_branch()`` makes one). With ``read_only=True`` the store reads
        the branch's head as it moves. ``log()`` lists the branch's commits.
    """

    supports_writes: bool = True
    supports_deletes: bool = True
    supports_listing: bool = True

    path: str
    _backend: Backend | None
    _durability: Durability | None
    _multi_process: bool
    _validate_metadata: bool
    _cache_size: int | None
    _commit_log: bool
    _history: bool
    # The version read (`version=` or `as_of=` in microseconds), or None for the latest state.
    _version: str | None
    _as_of_us: int | None
    # The branch read and written (`branch=`), or None for "main".
    _branch: str | None
    _placement: ReadPlacement
    _db: _native.Database | None
    _native_store: _native.Store | None
    # A snapshot or transaction store: fixed at creation, never reopened by path.
    _fixed: bool
    # zarrdb.CodecPipeline's arrays opened on this store (and its `with_read_only` views), by
    # path, with the document each was opened from (`_pipeline.CodecPipeline._open`); dropped
    # with the handle.
    _arrays: dict[str, tuple[bytes, Any]]

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        backend: Backend | None = None,
        durability: Durability | None = None,
        multi_process: bool | None = None,
        validate_metadata: bool = True,
        cache_size: int | None = None,
        commit_log: bool = False,
        history: bool = False,
        version: str | None = None,
        as_of: datetime.datetime | float | None = None,
        branch: str | None = None,
    ) -> None:
        if version is not None and as_of is not None:
            raise ValueError("give version= or as_of=, not both")
        if branch is not None and (version is not None or as_of is not None):
            raise ValueError(
                "give branch= or a version (version=, as_of=), not both: read a branch's head as version=NAME"
            )
        if branch is not None and (not isinstance(branch, str) or not branch):
            raise ValueError(f"branch must be a branch's name, not {branch!r}")
        if version is not None and not isinstance(version, str):
            raise ValueError(f"version must be a tag, a commit id or 'main', not {version!r}")
        as_of_us = _microseconds(as_of) if as_of is not None else None
        if (version is not None or as_of_us is not None) and not read_only:
            # A version never changes: its store is read-only whatever was asked.
            read_only = True
        super().__init__(read_only=read_only)
        if backend is not None and backend not in _BACKENDS:
            raise ValueError(f"unknown backend {backend!r}: expected one of {_BACKENDS}")
        if durability is not None and durability not in _DURABILITIES:
            raise ValueError(f"unknown durability {durability!r}: expected one of {_DURABILITIES}")
        if cache_size is not None and (
            isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 0
        ):
            raise ValueError(f"cache_size must be a number of bytes (an int >= 0), not {cache_size!r}")
        if not isinstance(commit_log, bool):
            raise ValueError(f"commit_log must be True or False, not {commit_log!r}")
        if commit_log and backend != "lmdb":
            raise ValueError("commit_log applies to backend='lmdb' only")
        # Absolute, so a pickled store reopens the same file from another working directory;
        # `str(store)` ("zarrdb://PATH") is taken back. A locator is kept as given.
        stripped = _strip_scheme(path)
        self.path = stripped.rstrip("/") if is_locator(stripped) else os.path.abspath(stripped)
        self._backend = backend
        self._durability = durability
        # Several processes by default: dask's process scheduler and reader processes need it;
        # fast durability is single-process only (another process reads only what was synced).
        self._multi_process = durability != "fast" if multi_process is None else multi_process
        self._validate_metadata = validate_metadata
        self._cache_size = cache_size
        self._commit_log = commit_log
        self._history = bool(history)
        self._version = version
        self._as_of_us = as_of_us
        self._branch = None if branch == "main" else branch
        self._placement = ReadPlacement()
        self._db = None
        self._native_store = None
        self._fixed = False
        self._arrays = {}

    @classmethod
    def _over(cls, path: str, native: _native.Store, *, read_only: bool) -> ZarrdbStore:
        """A store over a snapshot's or a transaction's native store."""
        store = cls(path, read_only=read_only, validate_metadata=native.checked)
        store._db = native.database
        store._native_store = native
        store._fixed = True
        store._is_open = True
        return store

    # -- opening -------------------------------------------------------------------------------

    def _handle(self) -> _native.Store | None:
        """The native store, opening the database on first use; None for a read-only store
        whose path holds no database yet."""
        if self._native_store is not None:
            return self._native_store
        if self._fixed:
            raise TransactionClosedError(
                f"this transaction store of {self.path!r} has been closed: its transaction has "
                "committed or aborted; write through the database's store or a new transaction",
                path=self.path,
            )
        versioned = self._version is not None or self._as_of_us is not None
        if self.read_only and not versioned and not is_locator(self.path) and not os.path.exists(self.path):
            return None
        try:
            db = _native.Database.open(
                self.path,
                not self.read_only,
                self._backend,
                self._durability,
                self._multi_process,
                self._cache_size,
                self._commit_log,
                read_only=self.read_only,
                history=self._history,
            )
        except _native.LockedError as locked:
            raise _mode_mismatch(locked, self._multi_process, self._backend) from locked
        if self._branch is not None:
            db = db.on_branch(self._branch)
        self._db = db
        if self._version is not None or self._as_of_us is not None:
            native = db.version(self._version, self._as_of_us)
        else:
            native = db.store()
        self._native_store = native.with_checks(self._validate_metadata)
        return self._native_store

    def _check_writable(self) -> None:
        """Refuse writes to a read-only store (``ValueError``, zarr-python's contract) and, with
        ``TransactionError`` (kind "would_deadlock"), writes that would wait for a transaction
        that this very context holds open on the database."""
        super()._check_writable()
        if not self._fixed:
            self._check_no_open_transaction("write through another store of the database")

    def _check_no_open_transaction(self, operation: str) -> None:
        open_here = _open_transactions.get()
        # The path is resolved only inside some transaction block: writes stay syscall-free.
        if open_here and self._identity() in open_here:
            raise error(
                _native.TransactionError,
                f"cannot {operation} {self.path!r} inside a transaction() block on it: it would "
                "wait for that block's own transaction to end. Write through the store the block "
                "yields (`with store.transaction() as tx: ...tx...`)",
                kind="would_deadlock",
                path=self.path,
                operation=operation,
            )

    def _identity(self) -> str:
        """The database's identity for `_open_transactions`: its file's (or LMDB folder's)
        device and inode, which every name of it shares (a symbolic or a hard link; two native
        handles of one file would otherwise wait for each other's writer lock), or its real path
        while nothing is there yet; a bucket database's locator."""
        if is_locator(self.path):
            return self.path
        try:
            st = os.stat(self.path)
        except OSError:
            return os.path.realpath(self.path)
        return f"{st.st_dev}:{st.st_ino}"

    def _writable_handle(self) -> _native.Store:
        self._check_writable()
        handle = self._handle()
        assert handle is not None  # only read-only stores lack a database
        return handle

    async def _open(self) -> None:
        if self._is_open:
            raise ValueError("store is already open")
        await _in_worker(self._handle)
        self._is_open = True

    def _ensure_open_sync(self) -> None:
        if not self._is_open:
            self._handle()
            self._is_open = True

    def close(self) -> None:
        """Release this store's handle on the database (the file closes when no store of this
        process uses it any more). A closed store reopens on its next use."""
        if not self._fixed:
            self._db = None
            self._native_store = None
            # The arrays hold the database open too; the store's views share them (a view
            # opens its arrays again when it reads next).
            self._arrays.clear()
        super().close()

    def with_read_only(self, read_only: bool = False) -> ZarrdbStore:
        """A new store on the same database with another ``read_only`` setting (unopened; for a
        snapshot or transaction store, a view of the same snapshot or transaction)."""
        if self._fixed:
            # A view of the same snapshot or transaction (zarr-python asks for a read-only one
            # when a group is opened with mode="r").
            native = self._native_store
            if native is None:
                raise ValueError("this snapshot or transaction store has been closed")
            if not read_only and not native.writable:
                raise ValueError("a snapshot is read-only: it cannot be made writable")
            return ZarrdbStore._over(self.path, native, read_only=read_only)
        if not read_only and (self._version is not None or self._as_of_us is not None):
            raise ValueError("a version of the database is read-only: it cannot be made writable")
        other = type(self)(
            self.path,
            read_only=read_only,
            **self._settings(),
            history=self._history,
            version=self._version,
            as_of=None if self._as_of_us is None else self._as_of_us / 1e6,
            branch=self._branch,
        )
        if other._as_of_us is not None:
            other._as_of_us = self._as_of_us
        # zarr-python asks for a read-only view on every open with mode="r": the views share
        # the arrays kept for the pipeline, which follow the database's one handle either way.
        other._arrays = self._arrays
        return other

    # -- identity ------------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ZarrdbStore):
            return False
        if self._fixed or other._fixed:
            return self._native_store is other._native_store
        return (self.path, self.read_only, self._version, self._as_of_us, self._branch) == (
            other.path,
            other.read_only,
            other._version,
            other._as_of_us,
            other._branch,
        )

    def __hash__(self) -> int:
        return hash((self.path, self.read_only, self._version, self._as_of_us, self._branch))

    def __repr__(self) -> str:
        kind = ""
        if self._fixed:
            kind = ", snapshot" if self.read_only else ", transaction"
        elif self._version is not None:
            kind = f", version={self._version!r}"
        elif self._as_of_us is not None:
            kind = f", as_of={self._as_of_us / 1e6!r}"
        else:
            if self._branch is not None:
                kind = f", branch={self._branch!r}"
            if self.read_only:
                kind += ", read_only=True"
        return f"ZarrdbStore({self.path!r}{kind})"

    def __str__(self) -> str:
        # Taken back by ZarrdbStore(...) and by xarray's engine="zarrdb". A locator names itself.
        return self.path if is_locator(self.path) else f"{SCHEME}{self.path}"

    def __getstate__(self) -> dict[str, Any]:
        if self._fixed:
            raise TypeError(
                "a snapshot or transaction ZarrdbStore cannot be pickled: "
                "it is tied to one open database handle"
            )
        # Only what reopens the database by path: handles are per process.
        return {
            "path": self.path,
            "read_only": self.read_only,
            "backend": self._backend,
            "durability": self._durability,
            "multi_process": self._multi_process,
            "validate_metadata": self._validate_metadata,
            "cache_size": self._cache_size,
            "commit_log": self._commit_log,
            "history": self._history,
            "version": self._version,
            "as_of_us": self._as_of_us,
            "branch": self._branch,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(  # type: ignore[misc]
            state["path"],
            read_only=state["read_only"],
            backend=state["backend"],
            durability=state["durability"],
            multi_process=state.get("multi_process"),
            validate_metadata=state.get("validate_metadata", True),
            cache_size=state.get("cache_size"),
            commit_log=state.get("commit_log", False),
            history=state.get("history", False),
            version=state.get("version"),
            as_of=None if state.get("as_of_us") is None else state["as_of_us"] / 1e6,
            branch=state.get("branch"),
        )
        # Exactly the microseconds given first (the float above may round).
        self._as_of_us = state.get("as_of_us")

    # -- reading -------------------------------------------------------------------------------

    def _get(self, key: str, byte_range: Range) -> _native.Value | None:
        handle = self._handle()
        return None if handle is None else handle.get(key, byte_range)

    async def get(
        self,
        key: str,
        prototype: BufferPrototype | None = None,
        byte_range: ByteRequest | None = None,
    ) -> Buffer | None:
        """The value under ``key`` (or the requested part of it), or None when absent."""
        prototype = prototype or default_buffer_prototype()
        engine_range = _engine_range(byte_range)
        await self._ensure_open()
        # Small reads on this thread, large ones in a worker: see `_placement`.
        if self._placement.inline(key, engine_range, lambda: self._size(key)):
            value = self._get(key, engine_range)
        else:
            value = await _in_worker(self._get, key, engine_range)
        if value is not None:
            self._placement.learn(key, engine_range, len(value))
        return _buffer(value, prototype)

    def get_sync(
        self,
        key: str,
        *,
        prototype: BufferPrototype | None = None,
        byte_range: ByteRequest | None = None,
    ) -> Buffer | None:
        """``get`` without an event loop (zarr-python's ``SupportsGetSync``)."""
        prototype = prototype or default_buffer_prototype()
        engine_range = _engine_range(byte_range)
        self._ensure_open_sync()
        value = self._get(key, engine_range)
        return _buffer(value, prototype)

    async def get_partial_values(
        self,
        prototype: BufferPrototype,
        key_ranges: Iterable[tuple[str, ByteRequest | None]],
    ) -> list[Buffer | None]:
        """Several (partial) values in one engine call, each None when absent."""
        requests = [(key, _engine_range(byte_range)) for key, byte_range in key_ranges]
        await self._ensure_open()

        def read() -> list[_native.Value | None]:
            handle = self._handle()
            if handle is None:
                return [None] * len(requests)
            return handle.get_many(requests)

        # Many or large values in a worker thread; a few small ones on this one.
        inline = len(requests) <= 16 and all(
            self._placement.inline(k, r, lambda k=k: self._size(k)) for k, r in requests
        )
        values = read() if inline else await _in_worker(read)
        for (key, engine_range), value in zip(requests, values, strict=True):
            if value is not None:
                self._placement.learn(key, engine_range, len(value))
        return [_buffer(v, prototype) for v in values]

    async def get_ranges(
        self,
        key: str,
        byte_ranges: Sequence[ByteRequest | None],
        *,
        prototype: BufferPrototype,
        max_concurrency: int = 10,
        max_gap_bytes: int = 1 << 20,
        max_coalesced_bytes: int = 16 << 20,
    ) -> AsyncIterator[Sequence[tuple[int, Buffer | None]]]:
        """Many byte ranges of ``key`` in one engine call, yielded as one batch of
        ``(input index, buffer)`` (zarr-python 3.2+, the sharding codec's partial reads; the
        base class would coalesce them into several reads). An absent ``key`` raises a
        ``BaseExceptionGroup`` holding ``FileNotFoundError``, as the base class does; the
        coalescing limits do not apply to one local call."""
        ranges = list(byte_ranges)
        values = await self.get_partial_values(prototype, [(key, r) for r in ranges])
        if any(value is None for value in values):
            raise BaseExceptionGroup("chunk read failed", [FileNotFoundError(key)])
        yield list(enumerate(values))

    def _size(self, key: str) -> int | None:
        handle = self._handle()
        return None if handle is None else handle.size(key)

    async def exists(self, key: str) -> bool:
        """Whether a value is stored under ``key``."""
        await self._ensure_open()
        return self._size(key) is not None

    async def getsize(self, key: str) -> int:
        """The size in bytes of the value under ``key``, read without reading the value."""
        await self._ensure_open()
        size = self._size(key)
        if size is None:
            raise FileNotFoundError(key)
        return size

    # -- writing -------------------------------------------------------------------------------

    async def set(self, key: str, value: Buffer) -> None:
        """Store ``value`` under ``key``; outside a transaction, one atomic commit."""
        self._check_writable()
        data = _as_bytes(value, "set")
        await self._ensure_open()
        handle = self._writable_handle()
        loop = asyncio.get_running_loop()
        completions = _completions(loop) if len(data) <= SUBMIT_BYTES else None
        if completions is not None and handle.can_submit(key):
            # Queued for the committer thread; the loop settles the future: no thread hop here.
            token, future = completions.expect(loop)
            try:
                handle.submit(key, data, completions.native, token)
            except BaseException:
                completions.forget(token)
                raise
            await future
            return
        await _in_worker(lambda: handle.set(key, data))

    def set_sync(self, key: str, value: Buffer) -> None:
        """``set`` without an event loop (zarr-python's ``SupportsSetSync``)."""
        self._check_writable()
        data = _as_bytes(value, "set_sync")
        self._ensure_open_sync()
        self._writable_handle().set(key, data)

    async def set_if_not_exists(self, key: str, value: Buffer) -> None:
        """Store ``value`` unless ``key`` holds a value, atomically: of several concurrent
        callers (threads or processes) exactly one stores its value."""
        self._check_writable()
        data = _as_bytes(value, "set_if_not_exists")
        await self._ensure_open()

        def write() -> None:
            handle = self._writable_handle()
            if self._fixed:
                # Inside a transaction, which holds the writer lock: check-then-set is atomic.
                if handle.size(key) is None:
                    handle.set(key, data)
            else:
                handle.database.set_if_absent(key, data, handle.checked)

        await _in_worker(write)

    async def _set_many(self, values: Iterable[tuple[str, Buffer]]) -> None:
        # One transaction for the lot (one fsync), rather than one commit per value.
        self._check_writable()
        items = [(key, _as_bytes(value, "_set_many")) for key, value in values]
        await self._ensure_open()

        def write() -> None:
            handle = self._writable_handle()
            if self._fixed:
                for key, data in items:
                    handle.set(key, data)
            else:
                handle.database.set_many(items, handle.checked)

        await _in_worker(write)

    async def delete(self, key: str) -> None:
        """Remove ``key``; an absent key is not an error."""
        self._check_writable()
        await self._ensure_open()
        await _in_worker(lambda: self._writable_handle().erase(key))

    def delete_sync(self, key: str) -> None:
        """``delete`` without an event loop (zarr-python's ``SupportsDeleteSync``)."""
        self._check_writable()
        self._ensure_open_sync()
        self._writable_handle().erase(key)

    async def delete_dir(self, prefix: str) -> None:
        """Remove every key under ``prefix`` (a node path; "" for everything), atomically."""
        self._check_writable()
        await self._ensure_open()
        prefix = prefix.strip("/")
        engine_prefix = f"{prefix}/" if prefix else ""
        await _in_worker(lambda: self._writable_handle().erase_prefix(engine_prefix))

    async def clear(self) -> None:
        """Remove every key, atomically."""
        self._check_writable()
        await self._ensure_open()
        await _in_worker(lambda: self._writable_handle().erase_prefix(""))

    # -- listing -------------------------------------------------------------------------------

    def _list_prefix(self, prefix: str) -> list[str]:
        handle = self._handle()
        return [] if handle is None else handle.list_prefix(prefix)

    async def list(self) -> AsyncIterator[str]:
        """Every key, sorted (zarrdb's own ``__zarrdb/`` bookkeeping is never listed)."""
        for key in await self._listing(""):
            yield key

    async def list_prefix(self, prefix: str) -> AsyncIterator[str]:
        """Every key starting with ``prefix``, sorted."""
        for key in await self._listing(prefix):
            yield key

    async def _listing(self, prefix: str) -> list[str]:
        await self._ensure_open()
        return await _in_worker(self._list_prefix, prefix)

    async def list_dir(self, prefix: str) -> AsyncIterator[str]:
        """The names of keys and child prefixes directly under ``prefix``."""
        await self._ensure_open()
        prefix = prefix.strip("/")
        engine_prefix = f"{prefix}/" if prefix else ""

        def listing() -> list[str]:
            handle = self._handle()
            if handle is None:
                return []
            keys, prefixes = handle.list_dir(engine_prefix)
            return sorted(keys + prefixes)

        for name in await _in_worker(listing):
            yield name

    async def is_empty(self, prefix: str) -> bool:
        """Whether no key lies under ``prefix`` (a node path; "" for the whole store)."""
        await self._ensure_open()
        prefix = prefix.strip("/")
        engine_prefix = f"{prefix}/" if prefix else ""

        def empty() -> bool:
            handle = self._handle()
            if handle is None:
                return True
            keys, prefixes = handle.list_dir(engine_prefix)
            return not keys and not prefixes

        return await _in_worker(empty)

    # -- transactions and snapshots ------------------------------------------------------------

    def _begin(self) -> tuple[_native.Txn, ZarrdbStore]:
        """Begin a write transaction (waits for the writer lock) and the store over it."""
        self._ensure_open_sync()
        handle = self._writable_handle()
        txn = handle.database.begin_write()
        native = txn.store().with_checks(self._validate_metadata)
        return txn, ZarrdbStore._over(self.path, native, read_only=False)

    @contextlib.contextmanager
    def transaction(self, message: str = "", author: str = "") -> Iterator[ZarrdbStore]:
        """A store whose writes commit atomically when the block ends, or not at all when it
        raises. A database that keeps history records ``message`` and ``author`` with the
        commit (``log()``).

        Reads through it see its own writes and, since beginning waits for the database's writer
        lock (across processes too: LMDB, redb with ``multi_process=True``), the latest commit of
        any writer. So zarr-python's partial-chunk writes (``arr[i::k] = v``: read the chunk,
        patch it, store it) run inside a transaction lose no concurrent update. One transaction is
        open at a time per database; beginning another waits, blocking the calling thread (on an
        event loop, use ``atransaction``). Inside the block, write through the yielded store
        only: a write through another store of the same database waits for the transaction to
        end.
        """
        self._check_writable()
        self._check_no_open_transaction("begin a transaction on")
        txn, store = self._begin()
        marked = _open_transactions.set(_open_transactions.get() | {self._identity()})
        try:
            yield store
        except BaseException:
            txn.abort()
            raise
        else:
            txn.commit(message, author)
        finally:
            _reset(marked)
            store._native_store = None

    @contextlib.asynccontextmanager
    async def atransaction(self, message: str = "", author: str = "") -> AsyncIterator[ZarrdbStore]:
        """``transaction()`` for ``async with``: beginning (which waits for the writer lock),
        committing and aborting run in a worker thread, so the event loop keeps running other
        tasks while this one waits for another transaction to end.

        The block commits when it ends and aborts when it raises. A task cancelled while waiting
        to begin gives the transaction up (it is aborted as soon as it begins); a commit that
        has started runs to its end even if the task is cancelled meanwhile.
        """
        self._check_writable()
        self._check_no_open_transaction("begin a transaction on")
        beginning = asyncio.ensure_future(asyncio.to_thread(self._begin))
        try:
            # Shielded: a cancellation must not lose a transaction that begins afterwards.
            txn, store = await asyncio.shield(beginning)
        except asyncio.CancelledError:
            beginning.add_done_callback(_abort_begun)
            raise
        marked = _open_transactions.set(_open_transactions.get() | {self._identity()})
        try:
            yield store
        except BaseException:
            await asyncio.shield(asyncio.to_thread(txn.abort))
            raise
        else:
            await asyncio.shield(asyncio.to_thread(txn.commit, message, author))
        finally:
            _reset(marked)
            store._native_store = None

    # -- history ---------------------------------------------------------------------------

    def _database(self) -> _native.Database:
        handle = self._handle()
        if handle is None:
            raise error(
                _native.OpenError, f"no database at {self.path!r}", kind="not_found", path=self.path
            )
        return handle.database

    def log(self) -> list[Commit]:
        """The commits of a database that keeps history, newest first, down to the first (the
        empty version history begins with): those of ``main``, or of the store's ``branch``. ``zarrdb.HistoryError`` (kind "history_off") for a
        database without history."""
        self._ensure_open_sync()
        return [
            Commit(
                id,
                parent,
                datetime.datetime.fromtimestamp(us / 1e6, tz=datetime.timezone.utc),
                message,
                author,
                changes,
                size,
            )
            for id, parent, us, message, author, changes, size in self._database().log()
        ]

    def tag(self, name: str, at: str | None = None) -> str:
        """Name the version ``at`` names (a tag, a branch or a commit id; by default the head of
        the store's branch, ``"main"`` unless ``branch=`` says otherwise) with ``name``, for
        good; returns its commit id. A tag never moves: a name in use, or one a
        deleted tag had, raises ``zarrdb.HistoryError`` (kind "tag_exists", "tag_deleted")."""
        self._ensure_open_sync()
        self._check_no_open_transaction("tag a version of")
        return self._database().tag(name, self._head_name() if at is None else at)

    def delete_tag(self, name: str) -> None:
        """Delete tag ``name``: its version stays readable by commit id, and the name is never
        used again."""
        self._ensure_open_sync()
        self._check_no_open_transaction("delete a tag of")
        self._database().delete_tag(name)

    def restore(self, at: str, path: str = "/") -> str:
        """Make the node at ``path`` (``"/"``: the whole hierarchy) hold again exactly what it
        held in the version ``at`` names (a tag, a commit id or ``"main"``), as one new commit:
        history is never rewritten, so the bad version stays readable. The commit goes to the
        store's branch (``"main"`` unless ``branch=`` says otherwise). Returns the commit id the
        branch is at afterwards."""
        self._check_writable()
        self._check_no_open_transaction("restore a version of")
        handle = self._writable_handle()
        self._arrays.clear()
        return handle.database.restore(path, at)

    def diff(self, start: str, end: str | None = None) -> list[tuple[str, int | None, int | None]]:
        """The keys that differ between two versions (tags, branches or commit ids; ``end`` by
        default the head of the store's branch), in key order, as ``(key, length at start or
        None, length at end or None)``: chunks and ``zarr.json`` documents added, removed or
        written again. Its cost follows what changed between them, not the size of the
        database."""
        self._ensure_open_sync()
        return self._database().diff(start, self._head_name() if end is None else end)

    def expire(
        self, keep: str | None = None, *, older_than: datetime.timedelta | None = None
    ) -> str | None:
        """Expire the versions older than the one ``keep`` names (a tag, a commit id, or
        ``"main"``: keep only the latest), or than the one current ``older_than`` ago, unless a
        tag names them: reading one raises ``zarrdb.HistoryError`` (kind "expired") from then on,
        and ``collect()`` frees what only they read. The horizon never moves back; returns the
        commit id it is at (None while no version has expired: nothing was that old)."""
        self._check_writable()
        self._check_no_open_transaction("expire versions of")
        if (keep is None) == (older_than is None):
            raise ValueError("give keep or older_than, not both or neither")
        database = self._writable_handle().database
        if older_than is not None:
            then = datetime.datetime.now(datetime.timezone.utc) - older_than
            return database.expire(as_of_us=max(0, int(then.timestamp() * 1e6)))
        return database.expire(keep)

    def collect(self) -> Collection:
        """Free what only expired versions read (``expire``): exactly the values no kept version
        reads, in steps that other writers interleave with. ``compact()`` then gives the space
        back to the file system."""
        self._check_writable()
        self._check_no_open_transaction("collect expired versions of")
        return Collection(*self._writable_handle().database.collect())

    def tags(self) -> dict[str, str]:
        """Every tag and the commit id it names."""
        self._ensure_open_sync()
        return dict(self._database().tags())

    def branches(self) -> dict[str, str]:
        """Every branch (``"main"`` among them) and the commit id it points at. Read a branch's
        head with ``ZarrdbStore(path, version=name)``."""
        self._ensure_open_sync()
        return dict(self._database().branches())

    def create_branch(self, name: str, at: str | None = None) -> str:
        """Make branch ``name`` at the version ``at`` names (a tag, a branch or a commit id; by
        default the head of the store's branch); returns its commit id. Tags and branches share names: one in use raises
        ``zarrdb.HistoryError`` (kind "name_taken")."""
        self._check_writable()
        self._check_no_open_transaction("make a branch of")
        return self._writable_handle().database.create_branch(name, self._head_name() if at is None else at)

    def delete_branch(self, name: str) -> None:
        """Delete branch ``name`` (not ``"main"``); its commits stay readable by id until they
        expire."""
        self._check_writable()
        self._check_no_open_transaction("delete a branch of")
        self._writable_handle().database.delete_branch(name)

    def merge(self, source: str, into: str = "main", message: str = "", fast_forward: bool = True) -> tuple[str, str]:
        """Merge the version ``source`` names (a branch, a tag or a commit id) into branch
        ``into``: returns ``(outcome, commit id)``, the outcome being ``"up_to_date"``,
        ``"fast_forward"`` or ``"merged"`` (a merge commit). With ``fast_forward=False`` a
        merge commit is made even where ``into`` could fast-forward, so its log gains one
        commit. When a key changed on both sides to different values nothing is written and
        ``zarrdb.HistoryError`` (kind "merge_conflict") names the keys."""
        self._check_writable()
        self._check_no_open_transaction("merge into")
        handle = self._writable_handle()
        self._arrays.clear()
        return handle.database.merge(source, into, message or f"merge {source} into {into}", fast_forward)

    def staged_write(self, message: str = "") -> StagedWrite:
        """Begin a write that many processes make and that lands as one commit (a database that
        keeps history): ``with store.staged_write("message") as stage:`` gives ``stage.store``,
        a store on a new staging branch that every process may write (dask's workers get it
        pickled), and the end of the block merges the branch into this store's branch
        (``"main"`` unless ``branch=`` says otherwise) and deletes it. Until then that branch
        does not change; ``stage.base`` is the commit id of its previous version. An exception
        in the block deletes the branch and leaves the target as it was. The merge never
        fast-forwards: the target gains one merge commit (docs/python.md, "Writing from a dask
        cluster")."""
        self._check_writable()
        self._check_no_open_transaction("stage a write to")
        return StagedWrite(self, message)

    def _on_branch(self, name: str) -> ZarrdbStore:
        """A new store (unopened) on branch ``name`` of this database, with this store's
        settings."""
        return type(self)(self.path, **self._settings(), branch=name)

    def _settings(self) -> dict[str, Any]:
        """How this store opens its database, for another store on the same one."""
        return {
            "backend": self._backend,
            "durability": self._durability,
            "multi_process": self._multi_process,
            "validate_metadata": self._validate_metadata,
            "cache_size": self._cache_size,
            "commit_log": self._commit_log,
        }

    def reset(self, branch: str, to: str) -> str:
        """Point ``branch`` at the version ``to`` names (``"main"``'s arrays then hold it);
        returns its commit id. The commits the branch leaves stay readable by id until they
        expire."""
        self._check_writable()
        self._check_no_open_transaction("reset a branch of")
        handle = self._writable_handle()
        self._arrays.clear()
        return handle.database.reset(branch, to)

    def compact(self, older_than: float | None = None) -> tuple[int, int]:
        """Give the space of erased arrays and overwritten chunks back to the file system; returns
        the database file's length before and after, in bytes.

        On a bucket database (``zarrdb+s3://``) it deletes the objects no commit reaches once
        they are ``older_than`` seconds old by the server's clock (default 3600; 0 deletes all
        of them) and keeps commits superseded within that time for their readers. Commits in
        flight lose nothing whatever the age. On a file ``older_than`` changes nothing.

        redb and LMDB (``CompactError`` on sled). An interrupted compaction leaves all data in
        place. On redb with ``multi_process=True`` (the default) it needs every snapshot and
        transaction of every process on the file to have ended, and raises ``CompactError``
        otherwise; with ``multi_process=False`` open snapshots keep reading the old file while the
        data is copied into a new one that takes its place. On LMDB a compacted copy replaces
        ``data.mdb``; it needs every snapshot of the store to have ended and no other process to
        have the database open.
        """
        return self._writable_handle().database.compact(older_than)

    def _head_name(self) -> str:
        """The name of the head this store reads and writes: its branch, or ``"main"``."""
        return self._branch or "main"

    def snapshot(self) -> ZarrdbStore:
        """A read-only store fixed at the latest commit (of the store's branch): later commits
        do not show in it."""
        self._ensure_open_sync()
        handle = self._handle()
        if handle is None:
            # Nothing stored yet: the empty read-only store is the snapshot.
            return type(self)(
                self.path,
                read_only=True,
                backend=self._backend,
                multi_process=self._multi_process,
                validate_metadata=self._validate_metadata,
            )
        native = handle.database.snapshot().with_checks(self._validate_metadata)
        return ZarrdbStore._over(self.path, native, read_only=True)

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Through __getstate__/__setstate__ (which refuse snapshot and transaction stores).
        return (_reopen, (type(self), self.__getstate__()))


def _microseconds(when: datetime.datetime | float) -> int:
    """``when`` (a datetime, naive ones taken as local time, or seconds since the Unix epoch) in
    microseconds since the Unix epoch."""
    if isinstance(when, datetime.datetime):
        seconds = when.timestamp()
    elif isinstance(when, (int, float)) and not isinstance(when, bool):
        seconds = float(when)
    else:
        raise ValueError(f"as_of must be a datetime or seconds since the Unix epoch, not {when!r}")
    if not seconds >= 0:
        raise ValueError(f"as_of must not be before the Unix epoch, not {when!r}")
    return round(seconds * 1e6)


class Commit(NamedTuple):
    """A commit of a database that keeps history, as ``ZarrdbStore.log()`` lists it."""

    id: str
    """16 hexadecimal digits; ``version=`` takes it."""
    parent: str | None
    """The commit it was made on; None for the first (the empty version history begins with)."""
    time: datetime.datetime
    """When it was made (UTC); later than its parent's."""
    message: str
    author: str
    changes: int
    """Keys written or removed."""
    bytes: int
    """Bytes of the values written."""


class Collection(NamedTuple):
    """What ``ZarrdbStore.collect()`` freed."""

    versions: int
    """Expired versions whose records were removed."""
    values: int
    """Values deleted: those only expired versions read."""
    bytes: int
    """Their bytes (``compact()`` gives the space back to the file system)."""


def _reset(marked: contextvars.Token[frozenset[str]]) -> None:
    """Undo a transaction's mark in `_open_transactions`."""
    try:
        _open_transactions.reset(marked)
    except ValueError:
        # The block ended in another context than it began in (an async generator closed by
        # the garbage collector): nothing of this context to undo.
        pass


def _mode_mismatch(locked: _native.LockedError, multi_process: bool, backend: str | None) -> _native.LockedError:
    """``locked`` with its message naming the open modes that exclude each other."""
    if backend not in (None, "redb"):
        return locked
    if multi_process:
        hint = (
            "this store asked for redb's multi-process mode (multi_process=True, the default of "
            "durable stores); another process holds the file in the single-process mode "
            "(durability=\"fast\" or multi_process=False), which excludes every other process"
        )
    else:
        hint = (
            "this store asked for redb's single-process mode (durability=\"fast\" or "
            "multi_process=False), which needs the file to itself; another process has it open, "
            "for example in the multi-process mode (the default of durable stores). Open it the "
            "same way in every process (multi_process=True, durable), or close the other process"
        )
    return error(
        _native.LockedError,
        f"{locked}: mode mismatch: {hint}",
        kind="locked",
        path=getattr(locked, "path", None),
        operation="open",
    )


def _reopen(cls: type[ZarrdbStore], state: dict[str, Any]) -> ZarrdbStore:
    store = cls.__new__(cls)
    store.__setstate__(state)
    return store


def _abort_begun(beginning: asyncio.Future[tuple[_native.Txn, ZarrdbStore]]) -> None:
    """Abort a transaction whose ``atransaction`` was cancelled while it waited to begin."""
    if beginning.cancelled() or beginning.exception() is not None:
        return
    txn, _ = beginning.result()
    # Off the event loop: aborting hands the word to the transaction's thread and waits for it.
    threading.Thread(target=txn.abort, name="zarrdb-abort", daemon=True).start()
