"""``zarrdb.CodecPipeline``: zarr-python's codec pipeline for arrays on a ``ZarrdbStore``, where
every assignment is one atomic read-modify-write done by the engine, and box selections are read
and written by the engine in one call.

zarr-python writes part of a chunk by reading the chunk, patching it and storing it again, above
the store: two writers of one chunk can lose an update, on every store. This pipeline sends each
assignment to the engine instead: a box selection (basic slicing) as one region write; any other
selection (steps, integer arrays via ``oindex``, coordinates and masks via ``vindex``, blocks,
integer indices that drop an axis) as the elements it sets in each chunk, computed by numpy
exactly as zarr-python computes them (``chunk[chunk_selection] = value[out_selection]``). The
engine reads, patches and stores every touched chunk in one commit, and a chunk another writer
(thread or process) stored after it was read is read and patched again: no update is lost, and
the assignment is atomic. On a transaction's store the write is part of the transaction.

What the engine cannot write itself (Zarr v2 arrays, strings and other data types that are not
fixed-size little-endian numbers, codecs zarrdb recognises but cannot run,
``write_empty_chunks=True``) runs through zarr-python's own pipeline inside one transaction of
the store: atomic too, the writers serialised by the database's writer lock.

Importing ``zarrdb`` makes this pipeline zarr-python's default (``codec_pipeline.path``), unless
the configuration names another one. Arrays on other stores then get zarr-python's own
``BatchedCodecPipeline``, built by zarr-python exactly as without zarrdb.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import sys
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import zarr
from zarr.abc.codec import CodecPipeline as _CodecPipeline
from zarr.core.array import create_codec_pipeline
from zarr.core.codec_pipeline import BatchedCodecPipeline
from zarr.core.metadata.v3 import ArrayV3Metadata
from zarr.registry import register_pipeline
from zarr.storage import StorePath

from . import _native
from ._store import ZarrdbStore, _in_worker


@dataclass(frozen=True)
class _Region:
    """A selection that is one box: ``offset``/``shape`` in the array at ``path``."""

    path: str
    offset: tuple[int, ...]
    shape: tuple[int, ...]


@dataclass(frozen=True)
class CodecPipeline(_CodecPipeline):
    """The pipeline of an array on a ``ZarrdbStore``: ``inner`` is the pipeline zarr-python
    would use (see the module's documentation)."""

    inner: _CodecPipeline
    metadata: ArrayV3Metadata | None = None
    store: ZarrdbStore | None = None

    @classmethod
    def from_codecs(cls, codecs: Iterable[Any]) -> Any:
        # zarr-python's default pipeline itself: what zarr-python builds from codecs alone (arrays
        # on other stores, the inner chunks of a shard) stays exactly its own.
        return BatchedCodecPipeline.from_codecs(codecs)

    @classmethod
    def from_array_metadata_and_store(cls, array_metadata: Any, store: Any) -> CodecPipeline:
        if not isinstance(store, ZarrdbStore):
            # zarr-python then builds its own pipeline, as it does without zarrdb.
            raise NotImplementedError("zarrdb.CodecPipeline serves arrays on a ZarrdbStore")
        # What zarr-python would build without a store (through `from_codecs` above: its own).
        inner = create_codec_pipeline(array_metadata, store=None)
        metadata = array_metadata if isinstance(array_metadata, ArrayV3Metadata) else None
        return cls(inner, metadata, store)

    def evolve_from_array_spec(self, array_spec: Any) -> CodecPipeline:
        return replace(self, inner=self.inner.evolve_from_array_spec(array_spec))

    def __iter__(self) -> Iterator[Any]:
        return iter(self.inner)

    @property
    def supports_partial_decode(self) -> bool:
        return self.inner.supports_partial_decode

    @property
    def supports_partial_encode(self) -> bool:
        return self.inner.supports_partial_encode

    def validate(self, *, shape: Any, dtype: Any, chunk_grid: Any) -> None:
        self.inner.validate(shape=shape, dtype=dtype, chunk_grid=chunk_grid)

    def compute_encoded_size(self, byte_length: int, array_spec: Any) -> int:
        return self.inner.compute_encoded_size(byte_length, array_spec)

    async def decode(self, chunk_bytes_and_specs: Any) -> Any:
        return await self.inner.decode(chunk_bytes_and_specs)

    async def encode(self, chunk_arrays_and_specs: Any) -> Any:
        return await self.inner.encode(chunk_arrays_and_specs)

    async def read(self, batch_info: Any, out: Any, drop_axes: tuple[int, ...] = ()) -> Any:
        # zarr-python 3.1 ignores what this returns; 3.2+ wants one {"status": ...} per chunk.
        batch = list(batch_info)
        region = None
        if not _reports_missing(batch):
            region = self._region(batch, tuple(out.shape), out.dtype, drop_axes, for_write=False)
        array = await self._open(region.path if region is not None else None)
        if region is None or array is None:
            return await self.inner.read(batch, out, drop_axes)
        offset, shape = list(region.offset), list(region.shape)
        target = out.as_ndarray_like()
        if (
            isinstance(target, np.ndarray)
            and target.flags.c_contiguous
            and target.flags.writeable
            and target.size == math.prod(region.shape)
        ):
            # zarr-python's output itself (a new C-order array): the engine decodes into it.
            await _in_worker(array.read_region_into, offset, shape, target.reshape(-1).view(np.uint8))
        else:
            data = await _in_worker(array.read_region, offset, shape)
            out[...] = np.frombuffer(data, dtype=out.dtype).reshape(region.shape)
        # Only read when no caller acts on missing chunks (`_reports_missing`).
        return tuple({"status": "present"} for _ in batch)

    async def write(self, batch_info: Any, value: Any, drop_axes: tuple[int, ...] = ()) -> None:
        batch = list(batch_info)
        store = self.store
        if store is None or not batch or store.read_only:
            # A read-only store: zarr-python's pipeline refuses the write with its own error.
            await self.inner.write(batch, value, drop_axes)
            return
        # Refused as the store's own writes are (inside a transaction() block of this database,
        # where the engine's write would wait for that block: ZarrdbStore).
        store._check_writable()
        region = self._region(batch, tuple(value.shape), value.dtype, drop_axes, for_write=True)
        array = await self._open(region.path if region is not None else None)
        if region is not None and array is not None:
            values = value.as_numpy_array()
            if values.shape != region.shape:
                values = np.broadcast_to(values, region.shape)
            # The engine reads the elements in place (no copy into bytes) as little-endian bytes.
            data = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
            await _in_worker(array.write_region, list(region.offset), list(region.shape), data)
            return
        plan = self._elements_plan(batch, value)
        array = await self._open(plan[0] if plan is not None else None)
        if plan is not None and array is not None:
            parts = plan[1]
            await _in_worker(_write_elements, array, parts, value.as_numpy_array(), drop_axes, self._grid())
            return
        await self._write_in_transaction(batch, value, drop_axes)

    async def _write_in_transaction(self, batch: list[Any], value: Any, drop_axes: tuple[int, ...]) -> None:
        """zarr-python's own write of ``batch``, inside one transaction of the store (or of the
        transaction the store belongs to): its read-modify-writes see the latest commit and
        commit together."""
        store = self.store
        assert store is not None
        if store._fixed or any(getattr(setter, "store", None) is not store for setter, *_ in batch):
            await self.inner.write(batch, value, drop_axes)
            return
        txn, tx = await _begin(store)
        try:
            rebased = [(StorePath(tx, setter.path), *rest) for setter, *rest in batch]
            await self.inner.write(rebased, value, drop_axes)
        except BaseException:
            await asyncio.shield(_in_thread(txn.abort))
            raise
        else:
            await asyncio.shield(_in_thread(txn.commit))
        finally:
            tx._native_store = None

    # -- planning -------------------------------------------------------------------------

    def _grid(self) -> _Grid:
        assert self.metadata is not None
        grid = _Grid.of(self.metadata)
        assert grid is not None
        return grid

    def _movable(self, dtype: Any) -> bool:
        """Whether the engine can move values of ``dtype`` for this array: the array's own data
        type, as fixed-size little-endian numbers (the engine's element bytes; checked again on
        open), on a chunk grid it knows (regular or rectilinear)."""
        metadata = self.metadata
        if metadata is None or self.store is None or _Grid.of(metadata) is None:
            return False
        if dtype != np.dtype(metadata.data_type.to_native_dtype()):
            return False
        little = dtype.byteorder in "<|" or (dtype.byteorder == "=" and sys.byteorder == "little")
        return dtype.kind in "biufc" and little

    def _chunks(self, batch: list[Any], *, for_write: bool) -> tuple[str, list[tuple[int, ...]]] | None:
        """The array path and each chunk's coordinates, when every chunk of ``batch`` is one of
        this array in this store, at the chunk's full shape, and (for a write) the array erases
        chunks left holding only the fill value, as the engine does; None otherwise."""
        metadata, store = self.metadata, self.store
        if metadata is None or store is None or not batch:
            return None
        ndim, grid = len(metadata.shape), self._grid()
        path: str | None = None
        coords: list[tuple[int, ...]] = []
        for byte_setter, spec, *_ in batch:
            if getattr(byte_setter, "store", None) is not store:
                return None
            if for_write and spec.config.write_empty_chunks:
                return None
            split = _split_chunk_key(byte_setter.path, metadata.chunk_key_encoding, ndim)
            if split is None or (path is not None and split[0] != path):
                return None
            if not grid.holds(split[1]) or tuple(spec.shape) != grid.edges(split[1]):
                return None
            path = split[0]
            coords.append(split[1])
        assert path is not None
        return "/" + path, coords

    def _region(
        self,
        batch: list[Any],
        shape: tuple[int, ...] | None,
        dtype: Any,
        drop_axes: tuple[int, ...],
        *,
        for_write: bool,
    ) -> _Region | None:
        """The box ``batch`` covers, when the selection is one (each chunk's part a block of
        slices, all at one offset from the value, tiling it) and the engine can move the value's
        or output's elements; None otherwise."""
        if drop_axes or not self._movable(dtype):
            return None
        chunks = self._chunks(batch, for_write=for_write)
        if chunks is None:
            return None
        path, coords = chunks
        grid = self._grid()
        ndim = len(grid.dims)
        if shape == () and ndim:
            # A scalar assigned to a selection: the selection's shape is where its parts end.
            shape = _selection_shape(batch, ndim)
        if shape is None or len(shape) != ndim:
            return None
        offset: tuple[int, ...] | None = None
        covered = 0
        for here_coords, (_setter, _spec, chunk_selection, out_selection, _complete) in zip(coords, batch):
            inner = _boxes(chunk_selection, out_selection, ndim)
            if inner is None:
                return None
            (chunk_start, value_start, extent) = inner
            if any(v + e > s for v, e, s in zip(value_start, extent, shape)):
                return None
            here = tuple(o + s - v for o, s, v in zip(grid.origin(here_coords), chunk_start, value_start))
            if offset is None:
                offset = here
            elif here != offset:
                return None
            covered += math.prod(extent)
        # Chunks are distinct, so their parts are disjoint: covering the value's size tiles it.
        if offset is None or covered != math.prod(shape):
            return None
        return _Region(path, offset, shape)

    def _elements_plan(self, batch: list[Any], value: Any) -> tuple[str, list[_ChunkPart]] | None:
        """Any selection as the elements it sets in each chunk, when the engine can move the
        value's elements: the array path and each chunk's part; None otherwise."""
        if not self._movable(value.dtype):
            return None
        chunks = self._chunks(batch, for_write=True)
        if chunks is None:
            return None
        path, coords = chunks
        parts = [
            _ChunkPart(here, chunk_selection, out_selection)
            for here, (_setter, _spec, chunk_selection, out_selection, _complete) in zip(coords, batch)
        ]
        return path, parts

    async def _open(self, path: str | None) -> _native.NativeArray | None:
        """The engine's handle on the array at ``path``, or None when the engine cannot move its
        elements as bytes (then zarr-python's pipeline does, and reports any real error itself)."""
        if path is None or self.store is None:
            return None
        store = self.store
        await store._ensure_open()
        handle = store._handle()
        if handle is None:
            return None
        # An array opened before is used again while its document is byte for byte the one it
        # was opened from: one small read on this thread instead of a thread hop, an open (a
        # read per node on its path) and a parse per assignment or read (a loop of chunk-sized
        # assignments, or xarray loading chunk by chunk, paid them for every chunk). A document
        # changed since (resized, erased and made again) opens the array afresh. The arrays of a
        # read-only store follow the database's handle: a writable store of the same database
        # opened later in the process replaces it, and they let it go (`registry.rs`).
        cacheable = not store._fixed
        found = handle.get(_document_key(path)) if cacheable else None
        if found is not None:
            cached = store._arrays.get(path)
            if cached is not None and cached[0] == memoryview(found):
                return cached[1]
        document = bytes(found) if found is not None else None
        try:
            # Given the document read above, the engine refuses an array made again in between
            # (it would be kept under a document that does not describe it); zarr-python's
            # pipeline then serves this call.
            array = await _in_worker(handle.open_array, path, document)
        except _native.Error:
            return None
        # Codecs zarrdb recognises but cannot run (numcodecs' zstd, blosc, ...) stay zarr-python's.
        usable = array if array.fixed_size and array.runnable else None
        if document is not None:
            store._arrays[path] = (document, usable)
        return usable


def _document_key(path: str) -> str:
    """The store key of the document of the array at ``path`` ("/a/b" -> "a/b/zarr.json")."""
    inner = path.strip("/")
    return f"{inner}/zarr.json" if inner else "zarr.json"


def _reports_missing(batch: list[Any]) -> bool:
    """Whether zarr-python must learn which chunks are missing (``array.read_missing_chunks``
    False, zarr-python 3.4): the engine's region read fills them without saying, so ``inner``
    reads those."""
    return any(getattr(spec.config, "read_missing_chunks", True) is False for _, spec, *_ in batch)


@dataclass(frozen=True)
class _Grid:
    """Where each chunk of an array starts and how large it is (its full edges, which may reach
    past the array's end): one step per dimension on a regular grid, the edges of each chunk on
    a rectilinear one (zarr-python 3.2+), as the engine reads the document."""

    # Per dimension: a step (every chunk that size), or each chunk's origin and edge.
    dims: tuple[int | tuple[tuple[int, ...], tuple[int, ...]], ...]

    @staticmethod
    def of(metadata: Any) -> _Grid | None:
        """The grid of ``metadata``; None for a grid the engine does not know."""
        grid = getattr(metadata, "chunk_grid", None)
        if hasattr(grid, "chunk_shape"):
            return _Grid(tuple(int(k) for k in grid.chunk_shape))
        shapes = getattr(grid, "chunk_shapes", None)
        if shapes is None:
            return None
        dims: list[int | tuple[tuple[int, ...], tuple[int, ...]]] = []
        for spec in shapes:
            if isinstance(spec, int):
                dims.append(spec)
            else:
                edges = tuple(int(e) for e in spec)
                origins = (0, *itertools.accumulate(edges[:-1]))
                dims.append((origins, edges))
        return _Grid(tuple(dims))

    def origin(self, coords: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(c * d if isinstance(d, int) else d[0][c] for c, d in zip(coords, self.dims))

    def edges(self, coords: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(d if isinstance(d, int) else d[1][c] for c, d in zip(coords, self.dims))

    def holds(self, coords: tuple[int, ...]) -> bool:
        """Whether ``coords`` names a chunk the grid lists (any, on a regular grid)."""
        return len(coords) == len(self.dims) and all(
            isinstance(d, int) or c < len(d[1]) for c, d in zip(coords, self.dims)
        )


@dataclass(frozen=True)
class _ChunkPart:
    """One chunk's part of an assignment, as zarr-python's indexer gives it."""

    coords: tuple[int, ...]
    chunk_selection: Any
    out_selection: Any


def _write_elements(
    array: _native.NativeArray,
    parts: list[_ChunkPart],
    values: np.ndarray[Any, Any],
    drop_axes: tuple[int, ...],
    grid: _Grid,
) -> None:
    """Set, in each chunk, the elements zarr-python's own write would set, to the same values:
    zarr-python runs ``chunk[chunk_selection] = value[out_selection]`` on the decoded chunk; here
    the same numpy assignment runs on a mask and on a scratch chunk, and the engine gets the
    masked positions and their values. One engine call: one atomic read-modify-write."""
    chunks: list[tuple[list[int], Any, Any]] = []
    for part in parts:
        chunk_shape = grid.edges(part.coords)
        if values.ndim == 0 or part.chunk_selection == ():
            chunk_value = values
        else:
            chunk_value = values[part.out_selection]
            if drop_axes:
                # Integer indices dropped these axes from the value: restore them, size 1.
                restored = tuple(None if d in drop_axes else slice(None) for d in range(len(chunk_shape)))
                chunk_value = chunk_value[restored]
        chosen = np.zeros(chunk_shape, dtype=bool)
        chosen[part.chunk_selection] = True
        scratch = np.empty(chunk_shape, dtype=values.dtype)
        scratch[part.chunk_selection] = chunk_value
        flat = scratch.reshape(-1)
        if chosen.all():
            chunks.append((list(part.coords), None, flat.view(np.uint8)))
            continue
        positions = np.flatnonzero(chosen).astype("<u8", copy=False)
        chosen_values = np.ascontiguousarray(flat[positions])
        chunks.append((list(part.coords), positions.view(np.uint8), chosen_values.view(np.uint8)))
    array.write_scattered(chunks)


async def _begin(store: ZarrdbStore) -> tuple[_native.Txn, ZarrdbStore]:
    """Begin a transaction of ``store`` (which waits for the writer lock) on a thread of its
    own: a pool's threads all waiting for the lock could leave none to the transaction that
    holds it. A task cancelled meanwhile gives the transaction up (aborted once it begins)."""
    loop = asyncio.get_running_loop()
    begun: asyncio.Future[tuple[_native.Txn, ZarrdbStore]] = loop.create_future()

    def settle(result: tuple[_native.Txn, ZarrdbStore] | None, error: BaseException | None) -> None:
        if begun.cancelled():
            if result is not None:
                _in_thread_now(result[0].abort)
        elif error is not None:
            begun.set_exception(error)
        else:
            begun.set_result(result)  # type: ignore[arg-type]

    def begin() -> None:
        result: tuple[_native.Txn, ZarrdbStore] | None = None
        error: BaseException | None = None
        try:
            result = store._begin()
        except BaseException as e:  # handed to the waiting task
            error = e
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:  # the loop has closed: nobody will use the transaction
            if result is not None:
                result[0].abort()

    threading.Thread(target=begin, name="zarrdb-begin", daemon=True).start()
    return await begun


def _in_thread_now(function: Any) -> None:
    threading.Thread(target=function, name="zarrdb-end", daemon=True).start()


async def _in_thread(function: Any) -> None:
    """``function()`` on a thread of its own, awaited (ending a transaction must not wait for a
    pool thread)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def settle(error: BaseException | None) -> None:
        if done.cancelled():
            return
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)

    def run() -> None:
        error: BaseException | None = None
        try:
            function()
        except BaseException as e:  # handed to the waiting task
            error = e
        loop.call_soon_threadsafe(settle, error)

    threading.Thread(target=run, name="zarrdb-end", daemon=True).start()
    await done


def _boxes(
    chunk_selection: Any, out_selection: Any, ndim: int
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None:
    """(start in the chunk, start in the value, extent) when both selections are unit-step
    slices of one extent; None otherwise (integers, arrays, steps)."""
    if not isinstance(chunk_selection, tuple) or not isinstance(out_selection, tuple):
        return None
    if len(chunk_selection) != ndim or len(out_selection) != ndim:
        return None
    starts, value_starts, extents = [], [], []
    for c, o in zip(chunk_selection, out_selection):
        if not isinstance(c, slice) or not isinstance(o, slice):
            return None
        if c.step not in (None, 1) or o.step not in (None, 1) or None in (c.start, c.stop, o.start, o.stop):
            return None
        if c.stop - c.start != o.stop - o.start or c.stop < c.start:
            return None
        starts.append(c.start)
        value_starts.append(o.start)
        extents.append(c.stop - c.start)
    return tuple(starts), tuple(value_starts), tuple(extents)


def _selection_shape(batch: list[Any], ndim: int) -> tuple[int, ...] | None:
    """Where the parts of a selection end in each dimension (its shape if they tile it)."""
    ends = [0] * ndim
    for _setter, _spec, _chunk_selection, out_selection, _complete in batch:
        if not isinstance(out_selection, tuple) or len(out_selection) != ndim:
            return None
        for i, o in enumerate(out_selection):
            if not isinstance(o, slice) or not isinstance(o.stop, int):
                return None
            ends[i] = max(ends[i], o.stop)
    return tuple(ends)


def _split_chunk_key(key: str, encoding: Any, ndim: int) -> tuple[str, tuple[int, ...]] | None:
    """(array path, chunk coordinates) of a chunk's store key, or None if it does not parse
    under the array's chunk key encoding (zarr-python's own decoder mis-reads "default" keys)."""
    separator = getattr(encoding, "separator", None)
    name = getattr(encoding, "name", None)
    if name not in ("default", "v2") or separator not in ("/", "."):
        return None
    parts = key.split("/")
    if separator == "/":
        count = ndim + 1 if name == "default" else max(ndim, 1)
    else:
        count = 1
    if len(parts) < count:
        return None
    chunk_key = "/".join(parts[len(parts) - count :])
    array_path = "/".join(parts[: len(parts) - count])
    body = chunk_key
    if name == "default":
        if not chunk_key.startswith("c"):
            return None
        body = chunk_key[2:]
    try:
        coords = tuple(int(c) for c in body.split(separator)) if ndim else ()
    except ValueError:
        return None
    if encoding.encode_chunk_key(coords) != chunk_key:
        return None
    return array_path, coords


# Known to zarr-python by its public name, the one ``codec_pipeline.path`` takes.
CodecPipeline.__module__ = "zarrdb"
register_pipeline(CodecPipeline)
# zarr-python's default from now on: a configuration that names a pipeline (set before or after
# this, or by the environment) keeps it; `zarr.config.reset()` comes back to this one.
zarr.config.update_defaults({"codec_pipeline": {"path": "zarrdb.CodecPipeline"}})
