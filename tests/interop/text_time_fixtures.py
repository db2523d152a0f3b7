#!/usr/bin/env python3
"""Text, byte-string and time arrays for tests/interop_text_time.rs.

Usage:
  text_time_fixtures.py write OUTDIR   zarr-python writes OUTDIR/v3.zarr and OUTDIR/v2.zarr, and
                                       OUTDIR/expected.json: {"/name": {"kind", "data_type",
                                       "values"}} for every array, the same in both hierarchies
  text_time_fixtures.py read STORE EXPECTED
                                       zarr-python reads every array of EXPECTED from STORE (a v3
                                       folder another writer made) and compares values, data
                                       types and fill values; exits 1 listing every difference

Values in JSON: text as strings, byte strings as base64, times as int64 tick counts (NaT is
-2**63). "kind" is "text", "bytes" or "time".
"""
import base64
import json
import sys
import warnings

import numpy as np
import zarr
from zarr.core.dtype import VariableLengthBytes, VariableLengthUTF8

warnings.simplefilter("ignore")
NAT = -(2**63)

TEXT = ["alpha", "", "b\u00e9ta", "\u65e5\u672c\u8a9e", "\U0001f600 emoji", "", "x" * 40]
BYTES = [b"ab", b"", b"\x00\xff\x01", b"plain", b"\xc3\x28", b"", b"z" * 33]


def cases():
    """(name, numpy values, zarr data type, object codec in v2 or None, fill value, kind)."""
    times = np.array([0, NAT, 1_000_000_000, -5, 978_307_200 * 10**9, NAT, 42], dtype="datetime64[ns]")
    deltas = np.array([1, -2, NAT, 0, 7, 8, 9], dtype="timedelta64[10s]")
    return [
        ("vlen_text", np.array(TEXT, dtype=object), VariableLengthUTF8(), "vlen-utf8", "", "text"),
        ("vlen_bytes", np.array(BYTES, dtype=object), VariableLengthBytes(), "vlen-bytes", b"", "bytes"),
        ("utf32", np.array(TEXT, dtype="<U40"), "<U40", None, "", "text"),
        ("utf32_be", np.array(TEXT, dtype=">U40"), ">U40", None, "", "text"),
        ("nt_bytes", np.array([b.rstrip(b"\0") for b in BYTES], dtype="S33"), "S33", None, b"", "bytes"),
        ("datetime_ns", times, "datetime64[ns]", None, NAT, "time"),
        ("timedelta_10s", deltas, "timedelta64[10s]", None, NAT, "time"),
    ]


def as_json(values, kind):
    if kind == "text":
        return [str(v) for v in values]
    if kind == "bytes":
        return [base64.standard_b64encode(bytes(v)).decode() for v in values]
    return [int(v) for v in values.view("i8")]


def write(outdir):
    expected = {}
    for fmt in (3, 2):
        root = zarr.open_group(f"{outdir}/v{fmt}.zarr", mode="w", zarr_format=fmt)
        for name, values, dtype, object_codec, fill, kind in cases():
            # Chunks of 3 over 7 elements: two whole chunks and an edge chunk; the last element is
            # left unwritten where the fill value can show it.
            # In v2, zarr-python writes the variable-length types as "|O" with their object codec
            # (`object_codec`) as the first filter.
            arr = root.create_array(name, shape=(7,), chunks=(3,), dtype=dtype, fill_value=fill)
            arr[:6] = values[:6]
            # The expected fill is set here, not read back: zarr-python 3.1.6 returns stray memory
            # for an unwritten vlen-bytes element.
            written = list(values[:6]) + [fill]
            arr.attrs["kind"] = kind
            expected[f"/{name}"] = {"kind": kind, "values": as_json(np.array(written, dtype=values.dtype), kind)}
    with open(f"{outdir}/expected.json", "w") as f:
        json.dump(expected, f, indent=1)


def read(store, expected_path):
    with open(expected_path) as f:
        expected = json.load(f)
    if store.startswith("s3://"):
        # A bucket on the server AWS_* names (tests/s3_interop.rs), through obstore.
        from transfer_check import s3_store
        bucket, _, prefix = store[len("s3://"):].partition("/")
        store = s3_store(bucket, prefix, read_only=True)
    root = zarr.open_group(store, mode="r")
    problems = []
    for path, want in expected.items():
        try:
            arr = root[path.lstrip("/")]
            got = as_json(np.asarray(arr[:]), want["kind"])
        except Exception as e:  # every array is checked, every failure listed
            problems.append(f"{path}: {type(e).__name__}: {e}")
            continue
        if got != want["values"]:
            problems.append(f"{path}: read {got}, expected {want['values']}")
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"{len(expected)} arrays read as expected")


def main():
    if sys.argv[1] == "write":
        write(sys.argv[2])
    elif sys.argv[1] == "read":
        read(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    from transfer_check import exit_without_finalizing

    exit_without_finalizing(main)
