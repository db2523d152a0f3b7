"""Where reads run (``zarrdb._placement``): small ones inline, large ones in a worker, and the
engine asked for a size only when neither the range nor an earlier read in the folder says.

The placement changes speed only; these tests pin the decisions, and that a store whose guesses
are wrong (a folder whose values change size) still returns every value whole.
"""

from __future__ import annotations

from pathlib import Path

from zarr.core.buffer import default_buffer_prototype

from zarrdb import ZarrdbStore
from zarrdb._placement import INLINE_READ_BYTES, ReadPlacement


class _Sizes:
    """A size lookup that counts its calls."""

    def __init__(self, size: int | None) -> None:
        self.size = size
        self.calls = 0

    def __call__(self) -> int | None:
        self.calls += 1
        return self.size


def test_the_first_whole_read_in_a_folder_asks_and_later_ones_guess() -> None:
    placement = ReadPlacement()
    big = _Sizes(INLINE_READ_BYTES + 1)
    assert not placement.inline("a/c/0/0", None, big)
    placement.learn("a/c/0/0", None, INLINE_READ_BYTES + 1)
    assert not placement.inline("a/c/0/1", None, big)
    assert big.calls == 1  # the neighbour's size stood in for the lookup

    small = _Sizes(100)
    assert placement.inline("b/c/0", None, small)
    placement.learn("b/c/0", None, 100)
    assert placement.inline("b/c/1", None, small)
    assert small.calls == 1


def test_a_range_that_says_its_length_needs_no_lookup_and_teaches_nothing() -> None:
    placement = ReadPlacement()
    never = _Sizes(None)
    assert placement.inline("s/c/0", (0, 16), never)
    assert not placement.inline("s/c/0", (0, INLINE_READ_BYTES + 1), never)
    assert never.calls == 0
    placement.learn("s/c/0", (0, 16), 16)  # a range of a shard: not the size of a whole value
    huge = _Sizes(50 << 20)
    assert not placement.inline("s/c/1", None, huge)
    assert huge.calls == 1


def test_an_absent_value_reads_inline() -> None:
    assert ReadPlacement().inline("missing", None, _Sizes(None))


async def test_wrong_guesses_still_read_every_value_whole(tmp_path: Path) -> None:
    proto = default_buffer_prototype()
    store = ZarrdbStore(tmp_path / "p.zarrdb", validate_metadata=False)
    values = {"f/small": b"x" * 10, "f/big": bytes(range(256)) * 8192, "f/small2": b"y" * 3}
    for key, value in values.items():
        await store.set(key, proto.buffer.from_bytes(value))
    for _ in range(2):  # the second round reads with sizes learned from the first
        for key, value in values.items():
            got = await store.get(key, proto)
            assert got is not None and got.to_bytes() == value
    got_many = await store.get_partial_values(proto, [(k, None) for k in values])
    assert [g.to_bytes() if g is not None else None for g in got_many] == list(values.values())
