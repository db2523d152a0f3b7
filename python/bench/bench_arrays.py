"""The shared benchmark data (../shared/BENCHMARKS.md), vectorised with numpy.

Element ``i`` of the flat C-order index is ``float32(sin(i / 1000) * 1000 + u(i))`` where
``u(i) = (splitmix64(i) >> 40) / 2**24 - 0.5``: the same bytes the Rust bench
(``src/cli/bench/data.rs``) and the peers' scripts produce, so every store is fed identical data.
"""

from __future__ import annotations

import numpy as np

# The splitmix64 finaliser's constants (all arithmetic modulo 2**64).
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)

# Bit patterns of a few elements, computed by the Rust implementation (whose unit test checks
# them against the shared Python formula): a wrong formula here fails `check()`.
KNOWN_BITS = {0: 0x3EC44150, 1: 0x3F888515, 12345: 0xC35BEF15, 10_000_000: 0xC398E338}

# Elements generated per step: bounds the uint64/float64 temporaries to a few MB.
_STEP = 1 << 20


def _fill(out: np.ndarray, start: int) -> None:
    """Write the elements ``start .. start + out.size`` into the float32 vector ``out``."""
    i = np.arange(start, start + out.size, dtype=np.uint64)
    z = i + _GOLDEN  # numpy's uint64 arithmetic wraps, as splitmix64 needs
    z ^= z >> np.uint64(30)
    z *= _MIX1
    z ^= z >> np.uint64(27)
    z *= _MIX2
    z ^= z >> np.uint64(31)
    u = (z >> np.uint64(40)).astype(np.float64)
    u *= 1.0 / float(1 << 24)
    u -= 0.5
    x = i.astype(np.float64)
    x /= 1000.0
    np.sin(x, out=x)
    x *= 1000.0
    x += u
    out[:] = x  # the sum rounded to float32


def bench_array(shape: tuple[int, ...]) -> np.ndarray:
    """The benchmark array of ``shape``: little-endian float32, C order."""
    n = int(np.prod(shape, dtype=np.int64))
    flat = np.empty(n, dtype="<f4")
    for start in range(0, n, _STEP):
        _fill(flat[start : start + _STEP], start)
    return flat.reshape(shape)


def check() -> None:
    """Raise AssertionError unless the formula gives the known bit patterns."""
    for index, bits in KNOWN_BITS.items():
        value = np.empty(1, dtype="<f4")
        _fill(value, index)
        got = int(value.view("<u4")[0])
        assert got == bits, f"bench data element {index}: {got:#010x}, expected {bits:#010x}"
