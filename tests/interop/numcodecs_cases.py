#!/usr/bin/env python3
"""Fixtures for the numcodecs codec tests (tests/numcodecs_*.rs), written by zarr-python 3 with
numcodecs' own codecs, and the check that zarr-python reads zarrdb's copies.

Usage:
    numcodecs_cases.py write DIR      write the fixtures and DIR/manifest.json
    numcodecs_cases.py check MANIFEST read every entry's array with zarr-python, compare bytes

Manifest entries: {"kind": "filter" | "compressor" | "v2", "name", "store", "path",
"input": RAW, "expected": RAW, "exact": bool}. "input" holds the values written (C-order
little-endian bytes of the array's data type), "expected" what zarr-python reads back (lossy
filters change values), "exact" whether numcodecs' encoding is deterministic, so another writer
must produce the same chunk bytes. Paths are relative to the manifest's folder or absolute.
"""

import json
import os
import sys
import warnings

import numcodecs
import numcodecs.zarr3 as z3
import numpy as np
import zarr

warnings.filterwarnings("ignore")  # numcodecs.zarr3 warns that its API may change

RNG = np.random.default_rng(14)


def le_bytes(a):
    a = np.ascontiguousarray(np.asarray(a))
    if a.dtype.byteorder == ">":
        a = a.byteswap().view(a.dtype.newbyteorder("<"))
    return a.tobytes()


def walk(n, dtype):
    return np.cumsum(RNG.integers(-50, 50, n)).astype(dtype)


def floats(n, dtype, scale=100.0):
    return (RNG.standard_normal(n) * scale).astype(dtype)


def int_extremes(dtype):
    info = np.iinfo(dtype)
    return np.array([info.min, info.max, -1 if info.min < 0 else 1, 0, info.max, info.min, 7] * 5, dtype=dtype)


# (name, data, chunks, filters, compressors, fill_value, exact)
def v3_filter_cases():
    s = np.arange(60)
    f8 = 1000.0 + floats(60, "f8")
    return [
        ("delta_i4", walk(100, "<i4"), (30,), [z3.Delta(dtype="<i4")], None, 0, True),
        ("delta_i2_wraps", int_extremes("<i2"), (16,), [z3.Delta(dtype="<i2")], None, 0, True),
        ("delta_u1", walk(50, "u1"), (50,), [z3.Delta(dtype="|u1")], None, 0, True),
        ("delta_f8", floats(40, "<f8"), (15,), [z3.Delta(dtype="<f8", astype="<f8")], None, 0, True),
        ("delta_f2", floats(40, "<f2", 10.0), (40,), [z3.Delta(dtype="<f2")], None, 0, True),
        ("fso_f8_i2", f8.reshape(6, 10), (4, 4), [z3.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<i2")], None, 1000.0, True),
        ("fso_f4_u1_floats", (RNG.random(50) * 90).astype("<f4"), (20,), [z3.FixedScaleOffset(offset=0.5, scale=2.5, dtype="<f4", astype="|u1")], None, 0, True),
        ("fso_i4_ints", walk(64, "<i4"), (64,), [z3.FixedScaleOffset(offset=5, scale=3, dtype="<i4")], None, 0, True),
        ("fso_i2_to_f4", walk(64, "<i2"), (32,), [z3.FixedScaleOffset(offset=-3, scale=0.5, dtype="<i2", astype="<f4")], None, 0, True),
        ("fso_u2_to_f8", walk(30, "<i8").astype("<u2"), (30,), [z3.FixedScaleOffset(offset=2, scale=0.1, dtype="<u2", astype="<f8")], None, 0, True),
        ("fso_i4_float_offset", walk(50, "<i4"), (50,), [z3.FixedScaleOffset(offset=2.5, scale=3, dtype="<i4", astype="<i2")], None, 0, True),
        ("fso_f2", floats(50, "<f2", 10.0), (50,), [z3.FixedScaleOffset(offset=1, scale=7, dtype="<f2", astype="<i2")], None, 0, True),
        ("quantize_f8", floats(80, "<f8"), (25,), [z3.Quantize(digits=3, dtype="<f8")], None, 0, True),
        ("quantize_f2_negative_digits", floats(40, "<f2", 300.0), (40,), [z3.Quantize(digits=-1, dtype="<f2")], None, 0, True),
        # zarr-python 3.1 keeps the array's type after a quantize with another astype, so such an
        # array cannot be read back there; quantize's astype is covered by the v2 cases.
        ("quantize_f4", floats(80, "<f4", 5.0), (80,), [z3.Quantize(digits=2, dtype="<f4")], None, 0, True),
        ("bitround_f4", floats(100, "<f4"), (32,), [z3.BitRound(keepbits=5)], None, 0, True),
        ("bitround_f8", floats(100, "<f8"), (100,), [z3.BitRound(keepbits=20)], None, 0, True),
        ("bitround_f2", floats(50, "<f2", 10.0), (50,), [z3.BitRound(keepbits=3)], None, 0, True),
        ("astype_f8_f4", floats(40, "<f8"), (40,), [z3.AsType(encode_dtype="<f4", decode_dtype="<f8")], None, 0, True),
        ("astype_i4_i2", walk(40, "<i4"), (16,), [z3.AsType(encode_dtype="<i2", decode_dtype="<i4")], None, 0, True),
        ("astype_f4_i2_truncates", floats(40, "<f4"), (40,), [z3.AsType(encode_dtype="<i2", decode_dtype="<f4")], None, 0, True),
        ("astype_i4_f2", walk(40, "<i4"), (40,), [z3.AsType(encode_dtype="<f2", decode_dtype="<i4")], None, 0, True),
        ("bitround_f4_keep0", floats(40, "<f4"), (40,), [z3.BitRound(keepbits=0)], None, 0, True),
        ("delta_f4_shuffle_lz4", floats(64, "<f4"), (64,), [z3.Delta(dtype="<f4")], [z3.Shuffle(elementsize=4), z3.LZ4()], 0, True),
        ("packbits_1d", RNG.random(37) > 0.5, (37,), [z3.PackBits()], None, False, True),
        ("packbits_2d", (s.reshape(6, 10) % 3 == 0), (4, 3), [z3.PackBits()], None, False, True),
        ("delta_fso_chain", f8, (20,), [z3.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<i4"), z3.Delta(dtype="<i4")], [z3.LZ4()], 0, True),
    ]


def v3_compressor_cases():
    i4, f8 = walk(3000, "<i4"), floats(2000, "<f8")
    return [
        ("lz4_default", i4, (1000,), None, [z3.LZ4()], 0, True),
        ("lz4_accel_10", f8, (700,), None, [z3.LZ4(acceleration=10)], 0, True),
        ("shuffle_i4", i4, (1000,), None, [z3.Shuffle(elementsize=4)], 0, True),
        ("shuffle_lz4_f8", f8, (2000,), None, [z3.Shuffle(elementsize=8), z3.LZ4()], 0, True),
        ("bz2_default", i4, (1000,), None, [z3.BZ2()], 0, False),
        ("bz2_level9", f8.reshape(40, 50), (16, 16), None, [z3.BZ2(level=9)], 0, False),
        ("lzma_xz_default", i4, (1000,), None, [z3.LZMA()], 0, False),
        ("lzma_xz_crc32_preset1", f8, (2000,), None, [z3.LZMA(check=1, preset=1)], 0, False),
        ("lzma_alone", i4, (3000,), None, [z3.LZMA(format=2, preset=3)], 0, False),
        ("lzma_raw_lzma2", i4, (1000,), None, [z3.LZMA(format=3, filters=[{"id": 33, "preset": 1}])], 0, False),
        ("lzma_raw_delta_lzma1", i4, (1000,), None, [z3.LZMA(format=3, filters=[{"id": 3, "dist": 4}, {"id": 0x4000000000000001, "preset": 6, "lc": 2}])], 0, False),
        ("delta_bz2", i4, (1500,), [z3.Delta(dtype="<i4")], [z3.BZ2(level=5)], 0, False),
    ]


# (name, data, chunks, filters, compressor, fill_value, order)
def v2_cases():
    f8 = 1000.0 + floats(60, "f8")
    return [
        ("delta_lz4", walk(100, "<i4"), (30,), [numcodecs.Delta(dtype="<i4")], numcodecs.LZ4(), 0, "C"),
        ("delta_big_endian_zlib", walk(100, ">i4"), (40,), [numcodecs.Delta(dtype=">i4")], numcodecs.Zlib(level=1), 0, "C"),
        ("fso_f_order_bz2", f8.reshape(6, 10), (4, 4), [numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<u2")], numcodecs.BZ2(level=1), 0.0, "F"),
        ("fso_big_endian", f8.astype(">f8").reshape(6, 10), (3, 7), [numcodecs.FixedScaleOffset(offset=1000, scale=100, dtype=">f8", astype=">i4")], numcodecs.LZMA(), 0.0, "C"),
        ("quantize_lzma", floats(80, "<f4"), (25,), [numcodecs.Quantize(digits=2, dtype="<f4", astype="<f2")], numcodecs.LZMA(preset=1), 0.0, "C"),
        ("bitround_lz4", floats(80, "<f4"), (25,), [numcodecs.BitRound(keepbits=7)], numcodecs.LZ4(), 0.0, "C"),
        ("astype_shuffle_zstd", floats(64, "<f8"), (20,), [numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8"), numcodecs.Shuffle(elementsize=4)], numcodecs.Zstd(level=1), 0.0, "C"),
        ("packbits", RNG.random(45) > 0.3, (20,), [numcodecs.PackBits()], None, False, "C"),
        ("two_filters_f_order", walk(48, "<i2").reshape(6, 8), (4, 5), [numcodecs.Delta(dtype="<i2"), numcodecs.AsType(encode_dtype="<i4", decode_dtype="<i2")], numcodecs.LZ4(), 0, "F"),
    ]


def write(out):
    entries = []

    def record(kind, name, store, path, data, arr, exact):
        raw = os.path.join(out, f"{kind}_{name}")
        with open(raw + ".in", "wb") as f:
            f.write(le_bytes(data))
        with open(raw + ".out", "wb") as f:
            f.write(le_bytes(arr[...]))
        entries.append({"kind": kind, "name": name, "store": store, "path": path,
                        "input": raw + ".in", "expected": raw + ".out", "exact": exact})

    for kind, cases in (("filter", v3_filter_cases()), ("compressor", v3_compressor_cases())):
        store = os.path.join(out, kind)
        for name, data, chunks, filters, compressors, fill, exact in cases:
            arr = zarr.create_array(store, name=name, shape=data.shape, chunks=chunks, dtype=data.dtype,
                                    filters=filters, compressors=compressors, fill_value=fill)
            arr[...] = data
            record(kind, name, store, "/" + name, data, arr, exact)
    store = os.path.join(out, "v2")
    zarr.open_group(store, mode="w", zarr_format=2)
    for name, data, chunks, filters, compressor, fill, order in v2_cases():
        arr = zarr.create_array(store, name=name, shape=data.shape, chunks=chunks, dtype=data.dtype,
                                filters=filters, compressors=compressor, fill_value=fill, order=order,
                                zarr_format=2)
        arr[...] = data
        record("v2", name, store, "/" + name, data, arr, False)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(entries, f, indent=1)


def quantize_to_another_type(store, path):
    """Whether the array's v3 chain has a quantize whose astype differs from its dtype."""
    with open(os.path.join(store, *path.strip("/").split("/"), "zarr.json")) as f:
        codecs = json.load(f)["codecs"]
    return any(c.get("name") == "numcodecs.quantize"
               and np.dtype(c["configuration"].get("astype", c["configuration"]["dtype"]))
               != np.dtype(c["configuration"]["dtype"]) for c in codecs if isinstance(c, dict))


def check(manifest):
    base = os.path.dirname(os.path.abspath(manifest))
    with open(manifest) as f:
        entries = json.load(f)
    failures = 0
    for e in entries:
        with open(os.path.join(base, e["expected"]), "rb") as f:
            want = f.read()
        store = os.path.join(base, e["store"])
        if quantize_to_another_type(store, e["path"]):
            print(f"SKIP {e['name']}: zarr-python 3.1 ignores quantize's astype in v3 (Quantize.resolve_metadata)")
            continue
        try:
            got = le_bytes(zarr.open_array(store=store, path=e["path"].strip("/"), mode="r", zarr_format=3)[...])
        except Exception as err:
            failures += 1
            print(f"FAIL {e['name']}: zarr-python could not read zarrdb's array: {type(err).__name__}: {err}")
            continue
        if got != want:
            failures += 1
            print(f"FAIL {e['name']}: zarr-python reads other bytes than expected from zarrdb's array")
    print(f"{len(entries)} arrays checked, {failures} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check"):
        raise SystemExit(__doc__)
    (write if sys.argv[1] == "write" else check)(sys.argv[2])
