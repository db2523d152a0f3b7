"""Where a read runs: on the calling thread (even the event loop) or in a worker thread.

A native read of a small value takes microseconds, while a hop to a worker thread costs tens of
microseconds, which per 4 KiB chunk is most of the read: small reads run where they are asked
for. A large value (a big chunk, a shard) is read in a worker, so the event loop is never held
for a long copy and reads overlap the codecs' work on other chunks.

Telling them apart by asking the engine for the value's size first costs as much as half the
read for a large value in redb: its size is only known once the page holding the value's first
segment is read (zarr-python reading big_zstd in fresh processes, ``python/bench/fresh_reads.py``:
661 MB/s median with the guess below against 631 with a lookup per read; docs/benchmarks.md).
So the size is asked only when nothing better is known: a ranged read says its length, and the
values of one folder (one array's chunks, one row of them) are about the same size, so the size
of the last value read there stands for the next. A wrong guess costs speed only, never a
different result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

# Reads of at most this many bytes run on the calling thread: a 64 KiB value is read (from
# memory the engine has not cached yet included) in about the time of a hop to a worker.
INLINE_READ_BYTES = 64 << 10

# The most folders remembered; beyond it the memory starts afresh (a guess is only a guess).
_MAX_FOLDERS = 4096

# The engine takes a range as (offset, length) with length None for "to the end", or
# (None, n) for the last n bytes; None for the whole value.
Range = tuple[int | None, int | None] | None


def read_length(engine_range: Range, size: Callable[[], int | None]) -> int:
    """How many bytes a read of ``engine_range`` returns at most; ``size()`` gives the value's
    size (None when absent) and is called only when the range does not say."""
    if engine_range is not None:
        offset, length = engine_range
        if length is not None:
            return length
    whole = size()
    if whole is None:
        return 0
    if engine_range is not None and engine_range[0] is not None:
        return max(whole - engine_range[0], 0)
    return whole


def _folder(key: str) -> str:
    return key.rpartition("/")[0]


class ReadPlacement:
    """Decides, per read, whether it runs inline; learns value sizes per folder as reads return."""

    def __init__(self) -> None:
        self._sizes: dict[str, int] = {}
        self._lock = threading.Lock()

    def inline(self, key: str, engine_range: Range, size: Callable[[], int | None]) -> bool:
        """Whether a read of ``key`` (``engine_range`` of it) should run on the calling thread."""
        if engine_range is None or engine_range[1] is None:
            known = self._sizes.get(_folder(key))
            if known is not None:
                return known <= INLINE_READ_BYTES
        return read_length(engine_range, size) <= INLINE_READ_BYTES

    def learn(self, key: str, engine_range: Range, length: int) -> None:
        """A read of ``engine_range`` of ``key`` returned ``length`` bytes. Only whole values
        teach: a range of a shard says nothing about the size of the next whole value."""
        if engine_range is not None:
            return
        with self._lock:
            if len(self._sizes) >= _MAX_FOLDERS:
                self._sizes.clear()
            self._sizes[_folder(key)] = length
