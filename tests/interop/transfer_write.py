#!/usr/bin/env python3
"""Write the source hierarchies of the import/export tests (tests/transfer_interop.rs).

Usage: transfer_write.py OUTDIR

Every fixture is a whole Zarr hierarchy in a folder or a zip archive under OUTDIR, written by
zarr-python 3, by tensorstore, or by hand following ../shared/spec/ (Zarr v1 and the 2020 v3
draft, which no current library writes). OUTDIR/manifest.json describes them:

    {"fixtures": [
      {"name": "zp_v3_dir",               unique name, used in test messages
       "format": "v3" | "v2" | "v1" | "draft",
       "layout": "directory" | "zip",
       "source": "zp_v3/data.zarr",       folder or .zip, relative to OUTDIR
       "prefix": "",                      inside a zip: the folder that holds the hierarchy
       "writer": "zarr-python" | "tensorstore" | "hand",
       "source_readers": {READER: WHY},   readers that cannot read the source itself, and why
       "nodes": {
         "/":     {"node_type": "group", "attributes": {...}},
         "/a":    {"node_type": "implicit"},       a group without metadata document
         "/i":    {"node_type": "implicit",        ... that import turns into a group (the 2020
                   "imported_as": {"node_type": "group", "attributes": {}}},   draft, see below)
         "/x/y":  {"node_type": "array", "attributes": {...}, "shape": [...],
                   "dtype": "<i4",                 numpy type of the expected bytes
                   "expected": "raw/....raw",      full content, C order, little-endian
                   "export_skip_readers": {READER: WHY}}   readers that cannot read the export
       }}]}

Expected contents are built in numpy alongside the writes (the same region writes applied to an
array of fill values), so they do not depend on reading anything back. transfer_check.py
--source checks every fixture that a library can read against this manifest.

What the libraries do, found while writing this (zarr 3.1.6, tensorstore 0.1.86):

* zarr.storage.ZipStore never rewrites an entry: writing a key again appends a second entry of
  the same name (Python's zipfile warns "Duplicate name"). zarr-python reads the LAST one.
  tensorstore's `zip` kvstore refuses the whole archive ("Duplicate filename in ZIP"), so the
  ZipStore fixture is not read by tensorstore; every other zip is.
* tensorstore reads zip archives (kvstore driver "zip" over a "file" base), stored or deflated,
  with the hierarchy at the root or inside a folder of the archive.
* zarr-python 3 creates a zarr.json for every missing parent group when it creates an array, so
  the implicit group /a is made by a store wrapper that drops the key "a/zarr.json". Through such
  a layout zarr-python still opens /a/b (explicit) and /a/b/arr by path, but does not list /a as a
  member of the root (it warns "Object at a is not recognized as a component of a Zarr
  hierarchy") and refuses to open /a as a group (GroupNotFoundError). tensorstore has no groups:
  it opens arrays by path and never writes a group zarr.json (its hierarchy's root zarr.json is
  written here by hand; its parent folders stay implicit groups).
* zarr-python v2 (zarr_format=2) writes fill_value None as `"fill_value": null` in .zarray, and
  both zarr-python and tensorstore read unwritten chunks of such an array as zeros; so the expected
  content of null-fill arrays is 0 where nothing was written. NaN is written as "NaN". Every v2
  array gets a `.zattrs` (`{}` when empty), groups get `.zgroup` and `.zattrs`. The v2 key
  separator is given as chunk_key_encoding={"name": "v2", "separator": ...} and lands in .zarray as
  "dimension_separator".
* tensorstore cannot read an array whose codecs include "numcodecs.zlib" ('"numcodecs.zlib" is not
  registered'); zarr-python reads it. A v2 or v1 zlib array imported as v3 needs that codec (v3 has
  no zlib codec), so those arrays are not read with tensorstore after export.
* tensorstore writes the v2 chunk key encoding as {"name": "v2"} (no configuration) and the array's
  attributes in zarr.json; its spec's "metadata" shows them, so array attributes are checked
  through tensorstore too.
"""

import gzip
import json
import os
import shutil
import sys
import warnings
import zipfile
import zlib

import numcodecs
import numpy as np
import tensorstore as ts
import zarr
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, TransposeCodec,
                         ZstdCodec)
from zarr.storage import LocalStore, ZipStore

OUT = None  # set by main()
BOTH_READERS = ("zarr-python", "tensorstore")


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------

def values(dtype, shape, seed):
    """Deterministic content of the given numpy dtype and shape, with edge values for floats."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        flat = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, n, dtype=dt.newbyteorder("="), endpoint=True)
    elif dt.kind == "f":
        flat = (rng.standard_normal(n) * 1000).astype(dt.newbyteorder("="))
        # From position 1: a chunk or 0-d array of -0.0 alone would equal a 0.0 fill, and the
        # libraries would not store it.
        special = [-0.0, np.inf, -np.inf, np.nan, 1e-30][: max(0, n - 1)]
        flat[1: 1 + len(special)] = special
    elif dt.kind == "c":
        part = dt.newbyteorder("=").type(0).real.dtype
        flat = (rng.standard_normal(n) * 100).astype(part) + 1j * (rng.standard_normal(n) * 100).astype(part)
        flat = flat.astype(dt.newbyteorder("="))
        if n > 2:
            flat[2] = complex(np.nan, -0.0)
    else:
        raise ValueError(dtype)
    return flat.reshape(shape).astype(dt.newbyteorder("="))


def le_bytes(arr):
    """C-order little-endian bytes (what `zarrdb cat --raw` prints)."""
    a = np.ascontiguousarray(arr)
    if a.dtype.itemsize > 1 and a.dtype.byteorder in (">",) + (("=",) if sys.byteorder == "big" else ()):
        a = a.byteswap().view(a.dtype.newbyteorder("<"))
    return a.tobytes()


def le_dtype(dtype):
    dt = np.dtype(dtype)
    return dt.str if dt.itemsize == 1 else dt.newbyteorder("<").str


def save_expected(group, name, arr):
    rel = os.path.join("raw", group, (name.strip("/").replace("/", "__") or "root") + ".raw")
    os.makedirs(os.path.join(OUT, os.path.dirname(rel)), exist_ok=True)
    with open(os.path.join(OUT, rel), "wb") as f:
        f.write(le_bytes(arr))
    return rel


def box(start, stop):
    return tuple(slice(a, b) for a, b in zip(start, stop))


class Expected:
    """The expected nodes of one hierarchy, as the manifest's "nodes"."""

    def __init__(self, group):
        self.group = group  # raw/<group>/ holds the contents
        self.nodes = {}
        self.arrays = {}  # path -> expected numpy content

    def group_node(self, path, attributes):
        self.nodes[path] = {"node_type": "group", "attributes": attributes}

    def implicit(self, path, imported_as_group=False):
        self.nodes[path] = {"node_type": "implicit"}
        if imported_as_group:
            self.nodes[path]["imported_as"] = {"node_type": "group", "attributes": {}}

    def array(self, path, content, attributes, export_skip=None):
        self.arrays[path] = content
        self.nodes[path] = {
            "node_type": "array", "attributes": attributes, "shape": list(content.shape),
            "dtype": le_dtype(content.dtype), "expected": None,
            "export_skip_readers": export_skip or {},
        }

    def finish(self):
        for path, content in self.arrays.items():
            self.nodes[path]["expected"] = save_expected(self.group, path, content)
        return self.nodes


def fixture(name, fmt, layout, source, nodes, writer, prefix="", source_readers=None):
    return {"name": name, "format": fmt, "layout": layout, "source": source, "prefix": prefix,
            "writer": writer, "source_readers": source_readers or {}, "nodes": nodes}


# ---------------------------------------------------------------------------------------------
# zarr-python, Zarr v3
# ---------------------------------------------------------------------------------------------

IMPLICIT_KEY = "a/zarr.json"


def without_implicit(base):
    """A store class that never writes a/zarr.json, so /a stays an implicit group."""

    class Store(base):
        async def set(self, key, value, *args, **kwargs):
            if key == IMPLICIT_KEY:
                return None
            return await super().set(key, value, *args, **kwargs)

        async def set_if_not_exists(self, key, value):
            if key == IMPLICIT_KEY:
                return None
            return await super().set_if_not_exists(key, value)

    return Store


ROOT_ATTRS = {
    "title": "zarrdb transfer fixture",
    "nested": {"list": [1, 2.5, "x", None, True, False], "empty": {}, "deep": {"k": [[1], [2, 3]]}},
    "unicode": "Zürich – ☃",
    "big": 9007199254740993,
    "negative": -42,
    "float": 0.1,
}


def zp_v3_arrays():
    """(path, dtype, shape, chunks, codec kwargs, fill, attributes, writes, dims) of the v3 arrays.

    writes: None = the whole array once; else a list of (start, stop) boxes written in order (a
    box written again overwrites; in a ZipStore that appends a duplicate chunk entry).
    """
    big = {"serializer": BytesCodec(endian="big")}
    return [
        ("/dtypes/bool", "bool", (9, 7), (4, 3), {"compressors": None}, False, {}, None, None),
        ("/dtypes/int8", "int8", (9, 7), (4, 3), {"compressors": [GzipCodec(level=5)]}, 0,
         {"codec": "gzip"}, None, None),
        ("/dtypes/uint16_be", "uint16", (9, 7), (4, 3), {**big, "compressors": [ZstdCodec(level=3)]}, 0,
         {"codec": "bytes big + zstd"}, None, None),
        ("/dtypes/int32", "int32", (9, 7), (4, 3),
         {"compressors": [BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=4)]}, 0, {}, None,
         ["y", "x"]),
        ("/dtypes/int64", "int64", (9, 7), (4, 3), {"compressors": [Crc32cCodec()]}, 0, {}, None, None),
        ("/dtypes/float32_transposed", "float32", (9, 7), (4, 3),
         {"filters": [TransposeCodec(order=(1, 0))], "compressors": [GzipCodec(level=1)]}, 0.0, {}, None, None),
        ("/dtypes/float64_be_nan", "float64", (9, 7), (4, 3),
         {**big, "compressors": [ZstdCodec(level=1, checksum=True)]}, float("nan"),
         {"fill": "NaN, chunks (0,*) and (2,2) only"}, [((0, 0), (4, 7)), ((8, 6), (9, 7))], None),
        ("/dtypes/complex64", "complex64", (9, 7), (4, 3),
         {"compressors": [BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle", typesize=8)]},
         0j, {}, None, None),
        # Shards [8,6] of inner chunks [4,3] with zstd; shard (1,1) is never written and shard (0,1)
        # holds one inner chunk only.
        ("/sharded", "float32", (16, 12), (8, 6), {"shards": (8, 6), "inner_chunks": (4, 3),
                                                   "compressors": [ZstdCodec(level=3)]}, 0.0,
         {"description": "sharded, inner zstd", "scale": [1.0, 0.5]},
         [((0, 0), (8, 6)), ((8, 0), (16, 6)), ((0, 6), (3, 9)), ((12, 3), (16, 6))], None),
        # Only some chunks written; the box ((0,0),(2,2)) is written twice (second time other values).
        ("/partial", "int32", (12, 10), (4, 4), {"compressors": [ZstdCodec(level=1)]}, -1,
         {"units": "K", "valid_range": [-1, 1000]},
         [((0, 0), (4, 4)), ((5, 5), (7, 9)), ((0, 0), (2, 2))], None),
        ("/edge", "uint16", (10, 7), (4, 3), {"compressors": [GzipCodec(level=9)]}, 7, {}, None, None),
        ("/scalar", "float64", (), (), {"compressors": None}, 0.0, {"kind": "0-d"}, None, None),
        ("/a/b/arr", "int16", (6, 5), (3, 3), {"compressors": [ZstdCodec(level=2)]}, 0,
         {"under": "implicit group /a"}, None, None),
    ]


def write_zp_v3(store, exp):
    """Write the zarr-python v3 hierarchy into an open zarr store; fill `exp` with what to expect."""
    root = zarr.create_group(store, attributes=dict(ROOT_ATTRS), zarr_format=3)
    grp = root.create_group("grp", attributes={"kind": "group", "level": 1})
    sub = grp.create_group("sub", attributes={"level": 2, "tags": ["a", "b"]})
    sub.create_group("empty", attributes={})
    exp.group_node("/grp", {"kind": "group", "level": 1})
    exp.group_node("/grp/sub", {"level": 2, "tags": ["a", "b"]})
    exp.group_node("/grp/sub/empty", {})
    exp.group_node("/dtypes", {})
    seed = 0
    for path, dtype, shape, chunks, codecs, fill, attrs, writes, dims in zp_v3_arrays():
        seed += 1
        kwargs = dict(codecs)
        if "shards" in kwargs:
            chunks = kwargs.pop("inner_chunks")
        kwargs.setdefault("filters", None)
        kwargs.setdefault("serializer", BytesCodec() if np.dtype(dtype).itemsize == 1 else BytesCodec(endian="little"))
        arr = zarr.create_array(store, name=path.strip("/"), shape=shape, chunks=chunks, dtype=dtype,
                                fill_value=fill, attributes=attrs, dimension_names=dims, zarr_format=3, **kwargs)
        content = np.full(shape, fill, dtype=dtype)
        for i, (start, stop) in enumerate(writes or [((0,) * len(shape), shape)]):
            part = values(dtype, tuple(b - a for a, b in zip(start, stop)), seed * 100 + i)
            arr[box(start, stop)] = part
            content[box(start, stop)] = part
        exp.array(path, content, attrs)
    zarr.open_group(store, path="a/b", mode="r+").attrs.update({"parent": "implicit"})
    exp.group_node("/a/b", {"parent": "implicit"})
    exp.implicit("/a")
    # Rewrites the root zarr.json (a duplicate entry in a ZipStore).
    root.attrs.update({"updated": True})
    exp.group_node("/", dict(ROOT_ATTRS, updated=True))


def zip_folder(folder, archive, prefix, compression, with_dirs):
    """Zip a folder: names relative to the folder (prefix "") or under `prefix/`."""
    with zipfile.ZipFile(archive, "w", compression=compression) as zf:
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames.sort()
            rel = os.path.relpath(dirpath, folder)
            rel = "" if rel == "." else rel.replace(os.sep, "/") + "/"
            if with_dirs and (prefix or rel):
                zf.writestr(zipfile.ZipInfo(prefix + rel), b"")
            for f in sorted(filenames):
                zf.write(os.path.join(dirpath, f), prefix + rel + f)


def zp_v3_fixtures():
    exp = Expected("zp_v3")
    folder = os.path.join(OUT, "zp_v3", "data.zarr")
    write_zp_v3(without_implicit(LocalStore)(folder), exp)
    nodes = exp.finish()
    assert not os.path.exists(os.path.join(folder, "a", "zarr.json"))

    # The same writes through a ZipStore: duplicate entries for rewritten keys.
    zipstore = os.path.join(OUT, "zp_v3_zipstore.zip")
    store = without_implicit(ZipStore)(zipstore, mode="w")
    check = Expected("zp_v3")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Duplicate name", UserWarning)  # the point of this fixture
        write_zp_v3(store, check)
    store.close()
    assert {k: v for k, v in check.nodes.items() if k not in check.arrays} == \
        {k: v for k, v in nodes.items() if k not in exp.arrays}
    assert all(np.array_equal(check.arrays[k], exp.arrays[k], equal_nan=True) for k in exp.arrays)
    names = [i.filename for i in zipfile.ZipFile(zipstore).infolist()]
    dups = sorted({n for n in names if names.count(n) > 1})
    assert "zarr.json" in dups and "partial/c/0/0" in dups, f"ZipStore wrote no duplicates: {dups}"
    assert IMPLICIT_KEY not in names

    within = os.path.join(OUT, "zp_v3_within.zip")
    zip_folder(folder, within, "", zipfile.ZIP_STORED, with_dirs=False)
    parent = os.path.join(OUT, "zp_v3_parent.zip")
    zip_folder(folder, parent, "data.zarr/", zipfile.ZIP_DEFLATED, with_dirs=True)
    dup_why = "tensorstore's zip kvstore refuses archives with duplicate entries"
    return [
        fixture("zp_v3_dir", "v3", "directory", "zp_v3/data.zarr", nodes, "zarr-python"),
        fixture("zp_v3_zipstore", "v3", "zip", "zp_v3_zipstore.zip", nodes, "zarr-python",
                source_readers={"tensorstore": dup_why}),
        fixture("zp_v3_within", "v3", "zip", "zp_v3_within.zip", nodes, "zarr-python"),
        fixture("zp_v3_parent", "v3", "zip", "zp_v3_parent.zip", nodes, "zarr-python", prefix="data.zarr"),
    ]


# ---------------------------------------------------------------------------------------------
# tensorstore, Zarr v3
# ---------------------------------------------------------------------------------------------

def ts_arrays():
    """(path, dtype, shape, chunk_shape, codecs, chunk_key_encoding, fill, attributes, writes)."""
    le = {"name": "bytes", "configuration": {"endian": "little"}}
    be = {"name": "bytes", "configuration": {"endian": "big"}}
    one = {"name": "bytes"}
    default = {"name": "default", "configuration": {"separator": "/"}}
    shard = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 3], "codecs": [le, {"name": "zstd", "configuration": {"level": 3}}],
        "index_codecs": [le, {"name": "crc32c"}], "index_location": "start"}}
    return [
        ("/plain", "int32", (9, 7), (4, 3), [le, {"name": "gzip", "configuration": {"level": 4}}], default, 0,
         {"writer": "tensorstore", "n": [1, 2, 3]}, None),
        ("/sharded", "uint16", (16, 12), (8, 6), [shard], default, 3, {},
         [((0, 0), (8, 6)), ((9, 7), (10, 8))]),
        ("/v2keys_dot", "float32", (7, 5), (3, 2), [le], {"name": "v2", "configuration": {"separator": "."}},
         float("nan"), {}, [((0, 0), (4, 5))]),
        ("/v2keys_slash", "int8", (7, 5), (3, 2), [one, {"name": "crc32c"}],
         {"name": "v2", "configuration": {"separator": "/"}}, -3, {}, None),
        ("/nested/deep/be", "float64", (6, 6), (4, 4),
         [be, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                   "typesize": 8, "blocksize": 0}}], default, 0.0,
         {"under": "implicit groups"}, None),
        ("/nested/bool_t", "bool", (5, 8), (2, 3),
         [{"name": "transpose", "configuration": {"order": [1, 0]}}, one], default, False, {}, None),
    ]


def ts_fixtures():
    exp = Expected("ts_v3")
    folder = os.path.join(OUT, "ts_v3.zarr")
    os.makedirs(folder)
    root_attrs = {"writer": "tensorstore", "groups": "written by hand"}
    with open(os.path.join(folder, "zarr.json"), "w") as f:
        json.dump({"zarr_format": 3, "node_type": "group", "attributes": root_attrs}, f)
    exp.group_node("/", root_attrs)
    exp.implicit("/nested")
    exp.implicit("/nested/deep")
    for seed, (path, dtype, shape, chunks, codecs, cke, fill, attrs, writes) in enumerate(ts_arrays(), 50):
        fill_json = "NaN" if isinstance(fill, float) and np.isnan(fill) else fill
        meta = {"shape": list(shape), "data_type": dtype,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
                "chunk_key_encoding": cke, "fill_value": fill_json, "codecs": codecs, "attributes": attrs}
        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": os.path.join(folder, path.strip("/")) + "/"},
                "metadata": meta}
        t = ts.open(spec, create=True).result()
        content = np.full(shape, fill, dtype=dtype)
        for i, (start, stop) in enumerate(writes or [((0,) * len(shape), shape)]):
            part = values(dtype, tuple(b - a for a, b in zip(start, stop)), seed * 100 + i)
            t[box(start, stop)].write(part).result()
            content[box(start, stop)] = part
        exp.array(path, content, attrs)
    nodes = exp.finish()
    archive = os.path.join(OUT, "ts_v3.zip")
    zip_folder(folder, archive, "", zipfile.ZIP_STORED, with_dirs=False)
    return [
        fixture("ts_v3_dir", "v3", "directory", "ts_v3.zarr", nodes, "tensorstore"),
        fixture("ts_v3_zip", "v3", "zip", "ts_v3.zip", nodes, "tensorstore"),
    ]


# ---------------------------------------------------------------------------------------------
# zarr-python, Zarr v2
# ---------------------------------------------------------------------------------------------

ZLIB_WHY = "tensorstore has no numcodecs.zlib codec, which an imported zlib array needs"


def v2_arrays():
    """(path, dtype, shape, chunks, order, separator, compressor, fill, attributes, writes)."""
    blosc = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
    return [
        ("/c_blosc_dot", "int32", (9, 7), (4, 3), "C", ".", blosc, 0, {"order": "C"}, None),
        ("/f_zlib_slash", "float32", (9, 7), (4, 3), "F", "/", numcodecs.Zlib(level=4), float("nan"),
         {"order": "F"}, [((0, 0), (4, 7)), ((5, 3), (9, 5))]),
        ("/c_gzip_slash", "float64", (9, 7), (4, 3), "C", "/", numcodecs.GZip(level=6), float("nan"), {}, None),
        ("/f_zstd_dot_null", "int16", (9, 7), (4, 3), "F", ".", numcodecs.Zstd(level=3), None, {"fill": None},
         [((0, 0), (4, 3)), ((8, 6), (9, 7))]),
        ("/null_float", "float32", (9, 7), (4, 3), "C", ".", numcodecs.Zlib(level=1), None, {},
         [((4, 3), (8, 6))]),
        ("/be_int64", ">i8", (9, 7), (4, 3), "C", ".", numcodecs.Zstd(level=1), 5, {"endian": "big"},
         [((0, 0), (9, 3))]),
        ("/bool_gzip", "bool", (9, 7), (4, 3), "C", "/", numcodecs.GZip(level=1), False, {}, None),
        ("/f_3d_bitshuffle", "uint16", (5, 4, 3), (2, 3, 2), "F", ".",
         numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE), 0, {}, None),
        ("/nested/grp/u8", "uint8", (10,), (4,), "C", ".", numcodecs.Blosc(cname="zlib", clevel=1), 255,
         {"in": "nested group"}, [((0,), (6,))]),
    ]


def write_v2(folder, exp, arrays, consolidate=False):
    root_attrs = {"title": "zarr_format 2", "list": [1, "two", None]}
    root = zarr.create_group(folder, zarr_format=2, attributes=root_attrs)
    exp.group_node("/", root_attrs)
    groups = {}
    for seed, (path, dtype, shape, chunks, order, sep, compressor, fill, attrs, writes) in enumerate(arrays, 200):
        parent = path.rsplit("/", 1)[0]
        parts = [p for p in parent.split("/") if p]
        for depth in range(1, len(parts) + 1):
            gpath = "/" + "/".join(parts[:depth])
            if gpath not in groups:
                groups[gpath] = {"depth": depth}
                zarr.create_group(folder, path=gpath.strip("/"), zarr_format=2, attributes=groups[gpath])
                exp.group_node(gpath, groups[gpath])
        arr = zarr.create_array(folder, name=path.strip("/"), shape=shape, chunks=chunks, dtype=dtype, order=order,
                                chunk_key_encoding={"name": "v2", "separator": sep}, compressors=compressor,
                                filters=None, fill_value=fill, attributes=attrs, zarr_format=2)
        # null fill: both libraries read unwritten chunks as 0.
        content = np.full(shape, 0 if fill is None else fill, dtype=dtype)
        for i, (start, stop) in enumerate(writes or [((0,) * len(shape), shape)]):
            part = values(dtype, tuple(b - a for a, b in zip(start, stop)), seed * 100 + i)
            arr[box(start, stop)] = part
            content[box(start, stop)] = part
        zlib_why = {"tensorstore": ZLIB_WHY} if isinstance(compressor, numcodecs.Zlib) else {}
        exp.array(path, content, attrs, export_skip=zlib_why)
        meta = json.load(open(os.path.join(folder, path.strip("/"), ".zarray")))
        assert meta["order"] == order and meta["dimension_separator"] == sep, meta
        assert (meta["fill_value"] is None) == (fill is None), meta
    if consolidate:
        zarr.consolidate_metadata(folder, zarr_format=2)


def v2_fixtures():
    exp = Expected("zp_v2")
    folder = os.path.join(OUT, "zp_v2.zarr")
    write_v2(folder, exp, v2_arrays())
    cons = Expected("zp_v2_consolidated")
    cons_folder = os.path.join(OUT, "zp_v2_consolidated.zarr")
    write_v2(cons_folder, cons, v2_arrays()[:2] + v2_arrays()[-1:], consolidate=True)
    assert os.path.exists(os.path.join(cons_folder, ".zmetadata"))
    return [
        fixture("zp_v2_dir", "v2", "directory", "zp_v2.zarr", exp.finish(), "zarr-python"),
        fixture("zp_v2_consolidated", "v2", "directory", "zp_v2_consolidated.zarr", cons.finish(), "zarr-python"),
    ]


# ---------------------------------------------------------------------------------------------
# Hand-made: Zarr v1 and the 2020 v3 draft
# ---------------------------------------------------------------------------------------------

PAD = {"i": -99, "u": 99, "f": -12345.5, "b": True}  # element values in the overhang of edge chunks


def chunk_bytes(content, index, chunks, dtype, order):
    """One whole chunk (edge chunks padded to full size) in the given dtype and memory order."""
    full = np.full(chunks, PAD[np.dtype(dtype).kind], dtype=dtype)
    start = [i * c for i, c in zip(index, chunks)]
    part = content[tuple(slice(s, s + c) for s, c in zip(start, chunks))]
    full[tuple(slice(0, n) for n in part.shape)] = part
    return full.tobytes(order=order)


def written_content(shape, chunks, dtype, fill, seed, written):
    """What a hand-made array holds: the fill value, and the test values in every chunk for
    which written(index) is true."""
    content = np.full(shape, fill, dtype=np.dtype(dtype).newbyteorder("="))
    data = values(dtype, shape, seed)
    for index in chunk_grid(shape, chunks):
        if written(index):
            region = tuple(slice(i * c, (i + 1) * c) for i, c in zip(index, chunks))
            content[region] = data[region]
    return content


def chunk_grid(shape, chunks):
    return np.ndindex(*[-(-s // c) for s, c in zip(shape, chunks)])


def write_json(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=4, sort_keys=True)


def v1_fixture(name, dtype, shape, chunks, order, level, fill, attrs, written, seed):
    """A v1 array: files meta, attrs and chunks "i.j" compressed with zlib (spec: no header)."""
    folder = os.path.join(OUT, name + ".zarr")
    os.makedirs(folder)
    write_json(os.path.join(folder, "meta"), {
        "zarr_format": 1, "shape": list(shape), "chunks": list(chunks), "dtype": np.dtype(dtype).str,
        "compression": "zlib", "compression_opts": level, "fill_value": fill, "order": order})
    write_json(os.path.join(folder, "attrs"), attrs)
    content = written_content(shape, chunks, dtype, 0 if fill is None else fill, seed, written)
    for index in chunk_grid(shape, chunks):
        if written(index):
            raw = chunk_bytes(content.astype(dtype), index, chunks, dtype, order)
            with open(os.path.join(folder, ".".join(map(str, index))), "wb") as f:
                f.write(zlib.compress(raw, level))
            assert np.frombuffer(zlib.decompress(open(os.path.join(folder, ".".join(map(str, index))), "rb").read()),
                                 dtype=dtype).size == np.prod(chunks)
    exp = Expected(name)
    exp.array("/", content, attrs, export_skip={"tensorstore": ZLIB_WHY})
    return fixture(name, "v1", "directory", name + ".zarr", exp.finish(), "hand",
                   source_readers={r: "no current library reads Zarr v1" for r in BOTH_READERS})


DRAFT_URI = "https://purl.org/zarr/spec/protocol/core/3.0"
GZIP_URI = "https://purl.org/zarr/spec/codec/gzip/1.0"


def draft_fixture():
    """A 2020-draft hierarchy: zarr.json entry point, meta/root..., data/root/<path>/c<i>/<j>."""
    name = "draft"
    folder = os.path.join(OUT, "draft.zarr")
    os.makedirs(folder)
    write_json(os.path.join(folder, "zarr.json"), {
        "zarr_format": DRAFT_URI, "metadata_encoding": DRAFT_URI, "metadata_key_suffix": ".json",
        "extensions": []})
    exp = Expected(name)
    groups = {"/": {"title": "2020 draft", "n": 3}, "/grp": {"level": 1}}
    for path, attrs in groups.items():
        key = "meta/root.group.json" if path == "/" else f"meta/root{path}.group.json"
        write_json(os.path.join(folder, key), {"attributes": attrs})
        exp.group_node(path, attrs)
    # docs/format.md: import gives every draft group a document, implied ones included (v3.0
    # readers know no implicit groups), while v3 sources keep theirs implicit.
    exp.implicit("/implicit", imported_as_group=True)
    exp.implicit("/implicit/deep", imported_as_group=True)
    # (path, data_type, numpy dtype, shape, chunks, layout, gzip level or None, fill JSON, fill, attrs, written)
    arrays = [
        ("/c_int", "<i4", "<i4", (7, 5), (3, 2), "C", 1, 0, 0, {"layout": "C"}, lambda ix: ix != (1, 1)),
        ("/grp/f_float", ">f8", ">f8", (7, 5), (3, 2), "F", 5, "NaN", np.nan, {"layout": "F"},
         lambda ix: ix[0] != 2),
        ("/grp/scalar", "<f4", "<f4", (), (), "C", 9, 0.0, 0.0, {}, lambda ix: True),
        ("/implicit/deep/u8", "u1", "u1", (10,), (4,), "C", None, 7, 7, {}, lambda ix: ix != (1,)),
        ("/implicit/flags", "bool", "?", (5, 3), (2, 2), "F", 1, False, False, {"kind": "bool"}, lambda ix: True),
    ]
    for seed, (path, data_type, dtype, shape, chunks, layout, level, fill_json, fill, attrs, written) in \
            enumerate(arrays, 300):
        meta = {"shape": list(shape), "data_type": data_type,
                "chunk_grid": {"type": "regular", "chunk_shape": list(chunks), "separator": "/"},
                "chunk_memory_layout": layout, "fill_value": fill_json, "extensions": [], "attributes": attrs}
        if level is not None:
            meta["compressor"] = {"codec": GZIP_URI, "configuration": {"level": level}}
        write_json(os.path.join(folder, f"meta/root{path}.array.json"), meta)
        content = written_content(shape, chunks, dtype, fill, seed, written)
        for index in chunk_grid(shape, chunks):
            if not written(index):
                continue
            raw = chunk_bytes(content.astype(dtype), index, chunks, dtype, layout)
            key = "c" + "/".join(map(str, index))
            chunk_path = os.path.join(folder, "data", "root", *path.strip("/").split("/"), *key.split("/"))
            os.makedirs(os.path.dirname(chunk_path), exist_ok=True)
            with open(chunk_path, "wb") as f:
                f.write(raw if level is None else gzip.compress(raw, compresslevel=level, mtime=0))
        exp.array(path, content, attrs)
    return fixture(name, "draft", "directory", "draft.zarr", exp.finish(), "hand",
                   source_readers={r: "no current library reads the 2020 draft layout" for r in BOTH_READERS})


def hand_fixtures():
    return [
        v1_fixture("v1_c", "<i4", (7, 5), (3, 2), "C", 1, 42, {"origin": "hand-made v1", "order": "C"},
                   lambda ix: ix not in [(1, 1), (2, 0)], 400),
        v1_fixture("v1_f", ">f8", (5, 6), (2, 4), "F", 6, None, {}, lambda ix: True, 401),
        draft_fixture(),
    ]


def main():
    global OUT
    if len(sys.argv) != 2:
        raise SystemExit("usage: transfer_write.py OUTDIR")
    OUT = os.path.abspath(sys.argv[1])
    os.makedirs(OUT, exist_ok=True)
    if os.listdir(OUT):
        raise SystemExit(f"transfer_write.py: {OUT} is not empty")
    fixtures = zp_v3_fixtures() + ts_fixtures() + v2_fixtures() + hand_fixtures()
    names = [f["name"] for f in fixtures]
    assert len(names) == len(set(names)), names
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump({"fixtures": fixtures}, f, indent=1)
    print(f"transfer_write: {len(fixtures)} fixtures in {OUT}")


if __name__ == "__main__":
    main()
