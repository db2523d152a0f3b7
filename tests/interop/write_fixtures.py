#!/usr/bin/env python3
"""Write Zarr v3 interop fixtures with zarr-python 3 and tensorstore.

Usage: write_fixtures.py OUTDIR

Writes OUTDIR/zarr_python.zarr and OUTDIR/tensorstore.zarr (two hierarchies, each with a root group
zarr.json), one .raw file per array under OUTDIR/raw/ holding the array's full content as C-order
little-endian bytes, and OUTDIR/manifest.json listing them (format: see read_check.py).

Every array uses ONLY the `bytes` codec, so a reader needs no compressor to read them.

Findings about the two libraries (zarr 3.1.6, tensorstore 0.1.86), checked by hand when this was
written; the cases below are shaped by them:

* NaN fill values in zarr.json: both write the string "NaN" for the canonical NaN. zarr-python ALSO
  writes "NaN" for a NaN with another payload or sign (0x7fc00001, 0xffc00000): the array object
  that created it keeps the payload in memory, but zarr.json loses it, so the array reads back
  differently once reopened. zarr-python cannot be told to write a hex fill at all (`fill_value=
  "0x..."` is a TypeError), so for zarr-python we create the array with the nearest value it takes
  and patch zarr.json's `fill_value` to the JSON we want (see `patch_fill`) before writing any data.
  It READS full-width hex ("0x7fc00001", "0x3f800000") correctly, except for float16: it decodes
  hex through Python's struct format 'e', which turns every half NaN into the canonical 0x7e00, so
  "0x7e01" reads as 0x7e00. That fixture is written by tensorstore only and marked `skip_readers`
  for zarr-python. Complex fills are two-element lists of the same float forms in both libraries
  (["NaN", "Infinity"], [1.5, -2.0]).
* tensorstore accepts hex fills as given and writes any NaN other than the canonical one back as
  full-width hex ("0x7fc00001", "0xffc00000", "0x7e01"); the canonical NaN as "NaN"; a non-NaN hex
  fill is normalised to a number ("0x3f800000" -> 1.0, "0x0" -> 0.0). It writes the default chunk
  key encoding as {"name": "default"} with no configuration, and one-byte types' bytes codec with no
  configuration (so does zarr-python).
* Short hex: zarr-python REJECTS "0x0" for float32 on read (TypeError "Invalid fill_value"), it wants
  exactly 4/8/16 hex digits for float16/32/64; tensorstore reads "0x0" as 0.0. So no fixture uses
  short hex (zarr-python could not read it back); zarrdb's unit tests must cover it instead.
* Raw types r8/r16: zarr-python does not know "r8"/"r16" at all (`data type 'r16' not understood`;
  its numpy void dtype writes a non-core "raw_bytes" extension type instead). tensorstore parses
  r<N> but wants a base64 string as fill (not the spec's list of integers), exposes the array with an
  extra byte dimension, and aborts the whole process (failed CHECK in GetEffectiveDomain) when asked
  to create one. So there are no raw-type fixtures: neither library could write nor both read them.
* tensorstore writes no group metadata; we write the group zarr.json documents of its hierarchy by
  hand so both hierarchies have explicit groups.
* Both libraries skip storing chunks that hold only the fill value (zarr-python compares with NaN ==
  NaN), so the stored chunk keys of a fixture are exactly the chunks with non-fill data in them.
"""

import json
import os
import sys
import zlib

import numpy as np
import tensorstore as ts
import zarr
from zarr.codecs import BytesCodec

CORE_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "complex64", "complex128"]
GROUP_JSON = {"zarr_format": 3, "node_type": "group", "attributes": {}}


# ---------------------------------------------------------------------------------------------
# Cases: each is a dict with
#   path     array path inside the hierarchy ("/a/b")
#   dtype    core data type name
#   endian   "little" | "big" (ignored for one-byte types)
#   shape, chunks
#   cke      chunk key encoding JSON ({"name": ..., "configuration": {"separator": ...}})
#   fill     the fill value exactly as it should appear in zarr.json
#   regions  None = the whole array is written; else a list of (start, stop) boxes that are written,
#            all other chunks are never written and must read as the fill value
#   writers  which libraries write the case (default both)
#   skip_readers  {reader: why} for readers of read_check.py known to misread the case
# ---------------------------------------------------------------------------------------------

def case(path, dtype, shape=(7, 5), chunks=(3, 2), endian="little", cke=None, fill=None, regions=None,
         writers=("zarr-python", "tensorstore"), skip_readers=None):
    if fill is None:
        fill = False if dtype == "bool" else [0.0, 0.0] if dtype.startswith("complex") else 0
    return dict(path=path, dtype=dtype, shape=tuple(shape), chunks=tuple(chunks), endian=endian,
                cke=cke or {"name": "default", "configuration": {"separator": "/"}}, fill=fill,
                regions=regions, writers=writers, skip_readers=skip_readers or {})


def one_byte(dtype):
    return np.dtype(dtype).itemsize == 1


def build_cases():
    cases = []
    # Every core dtype in both byte orders; shape [7,5] in chunks [3,2] has partial edge chunks.
    for dt in CORE_DTYPES:
        for endian in (["little"] if one_byte(dt) else ["little", "big"]):
            suffix = "" if one_byte(dt) else ("_le" if endian == "little" else "_be")
            cases.append(case(f"/{dt}{suffix}", dt, endian=endian))

    # Chunk key encodings, on a 3-d array (edge chunks in every dimension) inside a group.
    def enc(name, sep):
        return {"name": name, "configuration": {"separator": sep}}
    for name, sep, label in [("default", "/", "default_slash"), ("default", ".", "default_dot"),
                             ("v2", ".", "v2_dot"), ("v2", "/", "v2_slash")]:
        cases.append(case(f"/keys/{label}", "int32", shape=(4, 3, 5), chunks=(2, 2, 2), cke=enc(name, sep)))
        # 0-d arrays have one chunk; its key is "c" (default) or "0" (v2).
        cases.append(case(f"/keys/{label}_0d", "int16", shape=(), chunks=(), cke=enc(name, sep), fill=-7))

    # Shapes.
    cases += [
        case("/shapes/one_d", "float64", shape=(10,), chunks=(4,)),
        case("/shapes/one_d_big_chunk", "uint16", shape=(3,), chunks=(8,), endian="big"),
        case("/shapes/three_d", "complex64", shape=(3, 4, 5), chunks=(2, 3, 2), endian="big"),
        case("/shapes/zero_d", "float32", shape=(), chunks=(), fill=1.5),
        case("/shapes/zero_d_unwritten", "float64", shape=(), chunks=(), fill="0x7ff8000000000001", regions=[]),
        case("/shapes/exact_chunks", "int8", shape=(6, 4), chunks=(3, 2)),
        case("/shapes/empty", "int32", shape=(0, 3), chunks=(2, 2)),
    ]

    # Fill values, on arrays where only some chunks are written: the block [0:3, 0:4] (chunks (0,0)
    # and (0,1)) and the single element [6,4] (the corner chunk, which is mostly outside the array).
    sparse = [((0, 0), (3, 4)), ((6, 4), (7, 5))]
    fills = [
        ("bool_true", "bool", True, "little"),
        ("int8_neg", "int8", -128, "little"),
        ("int16_nonzero", "int16", -1234, "big"),
        ("int32_nonzero", "int32", 2147483647, "little"),
        # Not representable as an f64: catches integer fills parsed through a float.
        ("int64_big", "int64", -9007199254740993, "little"),
        ("uint64_max", "uint64", 18446744073709551615, "big"),
        ("uint32_nonzero", "uint32", 4000000000, "little"),
        ("uint8_nonzero", "uint8", 200, "little"),
        ("float16_nan", "float16", "NaN", "little"),
        ("float32_nan", "float32", "NaN", "little"),
        ("float64_nan", "float64", "NaN", "big"),
        ("float32_nan_payload", "float32", "0x7fc00001", "little"),
        ("float32_nan_payload_be", "float32", "0x7fc00001", "big"),
        ("float32_neg_nan", "float32", "0xffc00000", "little"),
        ("float64_nan_payload", "float64", "0x7ff8000000000001", "little"),
        ("float32_hex_one", "float32", "0x3f800000", "little"),
        ("float32_inf", "float32", "Infinity", "little"),
        ("float64_neg_inf", "float64", "-Infinity", "big"),
        ("float16_neg_inf", "float16", "-Infinity", "little"),
        ("float64_number", "float64", -2.5e-3, "little"),
        ("float64_neg_zero", "float64", -0.0, "little"),
        ("float16_number", "float16", 0.33325195, "big"),
        ("complex64_numbers", "complex64", [1.5, -2.0], "little"),
        ("complex128_nan_inf", "complex128", ["NaN", "Infinity"], "big"),
        ("complex128_hex", "complex128", ["0x7ff8000000000001", "-Infinity"], "little"),
        ("complex64_hex", "complex64", ["0x3f800000", "0x7fc00001"], "big"),
    ]
    for label, dt, fill, endian in fills:
        cases.append(case(f"/fills/{label}", dt, endian=endian, fill=fill, regions=sparse))
    # zarr-python reads any float16 hex NaN as the canonical NaN (see top), so only tensorstore writes
    # this one, and read_check.py does not ask zarr-python to read it.
    cases.append(case("/fills/float16_nan_payload", "float16", fill="0x7e01", regions=sparse,
                      writers=("tensorstore",),
                      skip_readers={"zarr-python": "reads a float16 hex NaN fill as the canonical NaN 0x7e00"}))
    # An array whose chunks were never written at all.
    cases.append(case("/fills/never_written", "int16", fill=77, regions=[]))
    return cases


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------

def float_from_json(dtype, value):
    """A numpy scalar of float `dtype` from a JSON fill value, keeping hex bits exactly."""
    dt = np.dtype(dtype)
    if isinstance(value, str) and value.startswith("0x"):
        bits = np.array([int(value, 16)], dtype=f"u{dt.itemsize}")
        return bits.view(dt)[0]
    special = {"NaN": np.nan, "Infinity": np.inf, "-Infinity": -np.inf}
    return dt.type(special.get(value, value))


def fill_to_numpy(dtype, fill):
    """The fill value as a one-element numpy array of `dtype` (bit-exact, NaN payloads kept)."""
    dt = np.dtype(dtype)
    if dtype.startswith("complex"):
        part = "float32" if dtype == "complex64" else "float64"
        pair = np.array([float_from_json(part, fill[0]), float_from_json(part, fill[1])], dtype=part)
        return pair.view(dt)
    if dtype.startswith("float"):
        return np.array([float_from_json(dtype, fill)], dtype=dt)
    return np.array([fill], dtype=dt)


def float_specials(dtype):
    """Values every float test array contains: NaN, +-Inf, -0, NaN payloads, subnormal, max."""
    dt = np.dtype(dtype)
    u = f"u{dt.itemsize}"
    payload_nans = {2: [0x7E05, 0xFE00], 4: [0x7FC00123, 0xFFC00000], 8: [0x7FF8000000000123, 0xFFF8000000000000]}
    info = np.finfo(dt)
    vals = np.array([np.nan, np.inf, -np.inf, -0.0, info.smallest_subnormal, info.max, info.min], dtype=dt)
    return np.concatenate([vals, np.array(payload_nans[dt.itemsize], dtype=u).view(dt)])


def make_data(name, dtype, shape):
    """Deterministic, non-trivial content for a whole array (seeded by the case name)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == "bool":
        flat = rng.random(n) < 0.5
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
        extremes = np.array([info.min, info.max, 1] + ([-1] if dt.kind == "i" else []), dtype=dt)
        flat[: min(n, len(extremes))] = extremes[: min(n, len(extremes))]
    elif dt.kind == "f":
        flat = (rng.standard_normal(n) * 1000).astype(dt)
        sp = float_specials(dtype)
        flat[: min(n, len(sp))] = sp[: min(n, len(sp))]
    else:  # complex: the parts are floats, with the float specials in the real parts, then imag
        part = "float32" if dtype == "complex64" else "float64"
        parts = make_data(name + "/parts", part, (n * 2,))
        parts[1::2] = np.roll(parts[1::2], 3)
        flat = parts.view(dt)
    return flat.reshape(shape)


def expected_content(c):
    """What the array must read as: fill everywhere, written data in the written regions."""
    data = make_data(c["path"], c["dtype"], c["shape"])
    if c["regions"] is None:
        return data, data.copy()
    out = np.empty(c["shape"], dtype=data.dtype)
    out[...] = fill_to_numpy(c["dtype"], c["fill"]).reshape(())  # bit-exact copy of the fill
    for start, stop in c["regions"]:
        sl = tuple(slice(a, b) for a, b in zip(start, stop))
        out[sl] = data[sl]
    return data, out


def region_slices(c):
    """The boxes to write, as tuples of slices ("whole array" is one box)."""
    if c["regions"] is None:
        return [tuple(slice(0, s) for s in c["shape"])]
    return [tuple(slice(a, b) for a, b in zip(start, stop)) for start, stop in c["regions"]]


def le_bytes(arr):
    """C-order little-endian bytes of a numpy array (bit-exact: byte swaps, no value conversions)."""
    a = np.ascontiguousarray(np.asarray(arr))
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and sys.byteorder == "big"):
        a = a.byteswap().view(a.dtype.newbyteorder("<"))
    return a.tobytes()


# ---------------------------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------------------------

def fs_path(store_dir, path):
    return os.path.join(store_dir, *path.strip("/").split("/"))


def patch_fill(array_dir, fill):
    """Put `fill` verbatim into zarr.json (zarr-python cannot write hex fills, see top)."""
    meta_path = os.path.join(array_dir, "zarr.json")
    with open(meta_path) as f:
        meta = json.load(f)
    if json.dumps(meta["fill_value"]) != json.dumps(fill):
        meta["fill_value"] = fill
        with open(meta_path, "w") as f:
            json.dump(meta, f, indent=2)


def write_zarr_python(store_dir, c, data):
    root = zarr.open_group(store_dir, mode="a", zarr_format=3)
    parent = root
    *groups, name = c["path"].strip("/").split("/")
    for g in groups:
        parent = parent.require_group(g)
    dt = c["dtype"]
    fill_np = fill_to_numpy(dt, c["fill"])[0]
    serializer = "auto" if one_byte(dt) else BytesCodec(endian=c["endian"])
    cke = {"name": c["cke"]["name"], "separator": c["cke"]["configuration"]["separator"]}
    parent.create_array(name, shape=c["shape"], chunks=c["chunks"], dtype=dt, fill_value=fill_np,
                        filters=None, compressors=None, serializer=serializer, chunk_key_encoding=cke)
    array_dir = fs_path(store_dir, c["path"])
    patch_fill(array_dir, c["fill"])
    # Reopen so the data is written by an array that knows the fill only from zarr.json.
    arr = zarr.open_array(store=store_dir, path=c["path"].strip("/"), mode="r+", zarr_format=3)
    for sl in region_slices(c):
        arr[sl] = data[sl]


def write_tensorstore(store_dir, c, data):
    # tensorstore writes no group metadata: write the parents' zarr.json by hand.
    parts = c["path"].strip("/").split("/")
    for i in range(len(parts)):
        d = os.path.join(store_dir, *parts[:i])
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "zarr.json"), "w") as f:
            json.dump(GROUP_JSON, f, indent=2)
    bytes_codec = {"name": "bytes"}
    if not one_byte(c["dtype"]):
        bytes_codec["configuration"] = {"endian": c["endian"]}
    metadata = {
        "data_type": c["dtype"], "shape": list(c["shape"]),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(c["chunks"])}},
        "chunk_key_encoding": c["cke"], "codecs": [bytes_codec], "fill_value": c["fill"],
    }
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": fs_path(store_dir, c["path"]) + "/"},
            "metadata": metadata}
    t = ts.open(spec, create=True).result()
    for sl in region_slices(c):
        t[sl].write(data[sl]).result()


def read_zarr_python(store_dir, path):
    arr = zarr.open_array(store=store_dir, path=path.strip("/"), mode="r", zarr_format=3)
    return arr[...]


def read_tensorstore(store_dir, path):
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": fs_path(store_dir, path) + "/"}}
    return ts.open(spec, read=True).result().read().result()


WRITERS = {
    "zarr-python": ("zarr_python.zarr", write_zarr_python, read_zarr_python),
    "tensorstore": ("tensorstore.zarr", write_tensorstore, read_tensorstore),
}


def check_codecs(store_dir, path):
    """Guard against a library adding a codec behind our back (zarr-python adds zstd by default)."""
    with open(os.path.join(fs_path(store_dir, path), "zarr.json")) as f:
        codecs = json.load(f)["codecs"]
    names = [cd if isinstance(cd, str) else cd["name"] for cd in codecs]
    if names != ["bytes"]:
        raise SystemExit(f"{store_dir}{path}: codec chain is {names}, want only bytes")


def write_all(script, writers, cases, check_codecs):
    """Write every case with every writer that can express it into OUTDIR (argv[1]), with the .raw
    contents and manifest.json. Shared by write_fixtures.py and write_codec_fixtures.py.

    `writers`: {writer: (store folder, write(store_dir, case, data), read(store_dir, path))};
    `check_codecs(store_dir, case, writer)` fails if the stored chain is not the intended one."""
    if len(sys.argv) != 2:
        raise SystemExit(f"usage: {script} OUTDIR")
    out = os.path.abspath(sys.argv[1])
    os.makedirs(os.path.join(out, "raw"), exist_ok=True)
    manifest = []
    for writer, (store_name, write, read) in writers.items():
        store_dir = os.path.join(out, store_name)
        if os.path.exists(store_dir):  # the libraries refuse to create arrays over old ones
            raise SystemExit(f"{store_dir} already exists: give {script} a new or empty OUTDIR")
        os.makedirs(store_dir)
        with open(os.path.join(store_dir, "zarr.json"), "w") as f:
            json.dump(GROUP_JSON, f, indent=2)
        for c in cases():
            if writer not in c["writers"]:
                continue
            data, want = expected_content(c)
            write(store_dir, c, data)
            check_codecs(store_dir, c, writer)
            # The .raw is what the writing library reads back from a fresh open; it must also be
            # what we meant to write, or the fixture would test a library quirk instead of zarrdb.
            got = le_bytes(read(store_dir, c["path"]))
            if got != le_bytes(want):
                raise SystemExit(f"{writer} {c['path']}: read-back differs from the data written")
            raw_rel = os.path.join("raw", store_name.split(".")[0] + c["path"].replace("/", "__") + ".raw")
            with open(os.path.join(out, raw_rel), "wb") as f:
                f.write(got)
            entry = {"store": store_name, "path": c["path"], "writer": writer, "expected": raw_rel}
            if c["skip_readers"]:
                entry["skip_readers"] = c["skip_readers"]
            manifest.append(entry)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"{script.removesuffix('.py')}: {len(manifest)} arrays in {out}")


def main():
    write_all("write_fixtures.py", WRITERS, build_cases, lambda store_dir, c, _writer: check_codecs(store_dir, c["path"]))


if __name__ == "__main__":
    main()
