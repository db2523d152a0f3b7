#!/usr/bin/env python3
"""Write Zarr v3 codec interop fixtures with zarr-python 3 and tensorstore.

Usage: write_codec_fixtures.py OUTDIR

Same output layout and manifest format as write_fixtures.py (whose value and file helpers are
imported from it): OUTDIR/zarr_python.zarr, OUTDIR/tensorstore.zarr, OUTDIR/raw/*.raw (C-order
little-endian content) and OUTDIR/manifest.json. Where write_fixtures.py covers data types, fill
values and key encodings with the `bytes` codec only, this covers the codecs: gzip, zstd, blosc,
crc32c, transpose and sharding_indexed, alone and in combinations, over the dtypes bool, int8,
uint16, int32, uint64, float16, float32, float64, complex64 and complex128 (each of them at least
once inside sharding and at least once with a compressor, for both writers).

Every case states its full codec chain as JSON. tensorstore is given that JSON as the array's
metadata; zarr-python gets the same chain as explicit codec objects (filters = the leading
array->array codecs, serializer = the array->bytes codec, compressors = the trailing bytes->bytes
codecs), so neither adds a default codec. After writing, the stored zarr.json `codecs` must equal
the intended chain up to each library's own normalisation (`normalise` below, checked by hand with
zarr 3.1.6 and tensorstore 0.1.86):
  * both write zstd's `"checksum": false` when it is absent (the spec lets it be omitted);
  * zarr-python writes `"index_location": "end"` when the sharding configuration has none;
    tensorstore drops `"index_location": "end"` (the default) and keeps "start";
  * zarr-python always writes blosc's `typesize` (from the dtype when not given), even with
    noshuffle; tensorstore never writes `typesize` with noshuffle, even when it was given.

What a library cannot express (those cases are written by the other one only):
  * zarr-python: blosc cname "snappy" (numcodecs' Blosc is built without it: "bad compressor or
    compressor not supported: 'snappy'"); blosc noshuffle WITHOUT typesize (it always adds one).
  * zarr-python: transpose before sharding_indexed when the inner chunk shape divides the
    transposed chunk shape but not the array's chunk shape ([6,4] chunks, transposed [4,6], inner
    [2,3]): it validates the inner chunk shape against the untransposed chunk and refuses to create
    or open the array ("needs to be divisible by the shard's inner `chunk_shape`"); with an inner
    shape that divides the untransposed chunk only ([3,2]) it accepts the metadata and then fails
    writing (KeyError in the sharding codec). tensorstore writes the [6,4]/[2,3] case; read_check.py
    does not ask zarr-python to read it. Both write transpose before sharding on square chunks.
  * tensorstore: a bytes->bytes codec after sharding_indexed (crc32c over the whole shard): it
    refuses to create or open such an array ("not compatible with subsequent bytes -> bytes codecs
    ... that apply to the entire shard"); zarr-python writes it with a warning. That fixture is
    written by zarr-python only and read_check.py does not ask tensorstore to read it.
Both libraries express everything else in the matrix: gzip 1/9, zstd 1 / 3+checksum / negative,
blosc lz4 lz4hc blosclz zstd zlib with noshuffle/shuffle/bitshuffle, explicit typesize (also one
that differs from the element size) and blocksize 0 / 256, crc32c, transpose (2-d and 3-d) with
either byte order, sharding with the index at start and at end, inner chains with gzip, blosc,
zstd, crc32c and transpose, nested sharding, partial edge shards, partly written shards (all-fill
inner chunks) and shards never written.
"""

import json
import os
import sys

import numpy as np
import tensorstore as ts
import zarr
from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec
from zarr.registry import get_codec_class

sys.dont_write_bytecode = True  # importing write_fixtures must not leave __pycache__ in tests/
from write_fixtures import GROUP_JSON, fill_to_numpy, fs_path, region_slices, write_all

BOTH = ("zarr-python", "tensorstore")


# ---------------------------------------------------------------------------------------------
# Codec chain builders (JSON, as it should appear in zarr.json)
# ---------------------------------------------------------------------------------------------

def byts(dtype, endian="little"):
    """The bytes codec; no configuration for one-byte types (what both libraries write)."""
    if np.dtype(dtype).itemsize == 1:
        return {"name": "bytes"}
    return {"name": "bytes", "configuration": {"endian": endian}}


def gzip(level):
    return {"name": "gzip", "configuration": {"level": level}}


def zstd(level, checksum=False):
    config = {"level": level}
    if checksum:
        config["checksum"] = True
    return {"name": "zstd", "configuration": config}


def blosc(cname, shuffle, typesize=None, clevel=5, blocksize=0):
    config = {"cname": cname, "clevel": clevel, "shuffle": shuffle, "blocksize": blocksize}
    if typesize is not None:
        config["typesize"] = typesize
    return {"name": "blosc", "configuration": config}


CRC = {"name": "crc32c"}


def transpose(order):
    return {"name": "transpose", "configuration": {"order": list(order)}}


def shard(chunk_shape, codecs, location="end"):
    """sharding_indexed with a bytes(little)+crc32c index; location None = leave it out."""
    config = {"chunk_shape": list(chunk_shape), "codecs": codecs,
              "index_codecs": [byts("uint64"), CRC]}
    if location is not None:
        config["index_location"] = location
    return {"name": "sharding_indexed", "configuration": config}


def case(path, dtype, codecs, shape=(7, 5), chunks=(3, 2), fill=None, regions=None, writers=BOTH,
         skip_readers=None):
    """As in write_fixtures.py, plus the codec chain. regions None = whole array written."""
    if fill is None:
        fill = False if dtype == "bool" else [0.0, 0.0] if dtype.startswith("complex") else 0
    return dict(path=path, dtype=dtype, codecs=codecs, shape=tuple(shape), chunks=tuple(chunks),
                fill=fill, regions=regions, writers=writers, skip_readers=skip_readers or {})


def build_cases():
    c = []
    # Compressors on a [7,5] array in [3,2] chunks (partial edge chunks).
    c += [
        case("/gzip/level1", "int32", [byts("int32"), gzip(1)]),
        case("/gzip/level9_be", "float64", [byts("float64", "big"), gzip(9)]),
        case("/zstd/level1", "uint16", [byts("uint16"), zstd(1)]),
        case("/zstd/level3_checksum", "float32", [byts("float32"), zstd(3, checksum=True)]),
        case("/zstd/negative_level", "complex64", [byts("complex64", "big"), zstd(-7)]),
        case("/blosc/lz4_shuffle", "int32", [byts("int32"), blosc("lz4", "shuffle", 4)]),
        case("/blosc/lz4hc_bitshuffle", "uint64", [byts("uint64"), blosc("lz4hc", "bitshuffle", 8, clevel=9)]),
        case("/blosc/blosclz_noshuffle", "int8", [byts("int8"), blosc("blosclz", "noshuffle", 1)]),
        case("/blosc/zstd_bitshuffle_bool", "bool", [byts("bool"), blosc("zstd", "bitshuffle", 1, clevel=1)]),
        case("/blosc/zlib_shuffle", "complex128", [byts("complex128"), blosc("zlib", "shuffle", 16)]),
        # typesize other than the element size (blosc shuffles 2-byte units of 4-byte ints).
        case("/blosc/typesize_2_of_int32", "int32", [byts("int32", "big"), blosc("lz4", "shuffle", 2)]),
        # Non-zero blocksize needs chunks larger than c-blosc's minimum block (128 bytes).
        case("/blosc/blocksize_256", "float32", [byts("float32"), blosc("zstd", "shuffle", 4, blocksize=256)],
             shape=(40, 30), chunks=(20, 16)),
        case("/blosc/snappy_shuffle", "float16", [byts("float16"), blosc("snappy", "shuffle", 2)],
             writers=("tensorstore",)),
        case("/blosc/noshuffle_no_typesize", "uint16", [byts("uint16"), blosc("lz4", "noshuffle")],
             writers=("tensorstore",)),
        # crc32c
        case("/crc32c/bytes_crc32c", "uint16", [byts("uint16", "big"), CRC]),
        case("/crc32c/bytes_zstd_crc32c", "float32", [byts("float32"), zstd(1), CRC]),
        # transpose + bytes + zstd
        case("/transpose/2d", "int32", [transpose([1, 0]), byts("int32"), zstd(1)]),
        case("/transpose/2d_be", "float16", [transpose([1, 0]), byts("float16", "big"), zstd(1)]),
        case("/transpose/3d_be", "complex128", [transpose([2, 0, 1]), byts("complex128", "big"), zstd(1)],
             shape=(3, 4, 5), chunks=(2, 3, 2)),
        case("/transpose/3d_bool_gzip", "bool", [transpose([2, 0, 1]), byts("bool"), gzip(1)],
             shape=(3, 4, 5), chunks=(2, 3, 2)),
    ]
    # Sharding: [10,9] in [4,6] shards of [2,3] inner chunks. The last shard row holds rows 8-9 only
    # (its second inner row lies past the edge), the last shard column cols 6-8 (same).
    sh = dict(shape=(10, 9), chunks=(4, 6))
    c += [
        case("/sharding/index_start", "int8", [shard((2, 3), [byts("int8")], "start")], **sh),
        case("/sharding/index_end_gzip", "uint16", [shard((2, 3), [byts("uint16"), gzip(5)], "end")], **sh),
        case("/sharding/index_default_zstd", "complex64",
             [shard((2, 3), [byts("complex64", "big"), zstd(1)], None)], **sh),
        case("/sharding/blosc_inner", "float32",
             [shard((2, 3), [byts("float32"), blosc("lz4", "shuffle", 4)], "start")], **sh),
        case("/sharding/blosc_inner_bitshuffle", "float16",
             [shard((2, 3), [byts("float16", "big"), blosc("blosclz", "bitshuffle", 2)], "end")], **sh),
        case("/sharding/blosc_zlib_inner", "complex128",
             [shard((2, 3), [byts("complex128"), blosc("zlib", "noshuffle", 16)], "start")], **sh),
        case("/sharding/crc32c_inner", "bool", [shard((2, 3), [byts("bool"), CRC], "end")], **sh),
        case("/sharding/transpose_inner", "float64",
             [shard((2, 3), [transpose([1, 0]), byts("float64", "big"), zstd(3)], "start")], **sh),
        # transpose before sharding: the shard codec sees the transposed chunk. A square chunk, as
        # zarr-python checks the inner chunk shape against the untransposed chunk (see top).
        case("/sharding/transpose_outside", "int32",
             [transpose([1, 0]), shard((2, 3), [byts("int32"), gzip(1)], "end")], shape=(10, 9), chunks=(6, 6)),
        case("/sharding/transpose_outside_nonsquare", "uint16",
             [transpose([1, 0]), shard((2, 3), [byts("uint16"), zstd(1)], "start")], shape=(10, 9), chunks=(6, 4),
             writers=("tensorstore",),
             skip_readers={"zarr-python": "checks the inner chunk shape against the untransposed chunk"}),
        # Nested: [8,6] shards of [4,3] shards (index at start) of [2,3] chunks; partial edge shards.
        case("/sharding/nested", "uint64",
             [shard((4, 3), [shard((2, 3), [byts("uint64"), zstd(1)], "start")], "end")],
             shape=(10, 9), chunks=(8, 6)),
        # Only inner chunk (0,0) of shard (0,0) and one element of the corner shard are written:
        # the other inner chunks of those shards are all fill (absent from the index), the other
        # shards are never written. Non-zero fill, so a reader that zero-fills is caught.
        case("/sharding/partial_fill", "int32", [shard((2, 3), [byts("int32"), blosc("lz4", "shuffle", 4)], "start")],
             fill=7, regions=[((0, 0), (2, 3)), ((9, 8), (10, 9))], **sh),
        case("/sharding/partial_fill_nested", "float32",
             [shard((4, 3), [shard((2, 3), [byts("float32"), gzip(1)], "end")], "start")],
             fill="NaN", regions=[((1, 1), (3, 2)), ((8, 3), (10, 4))], shape=(10, 9), chunks=(8, 6)),
        case("/sharding/never_written", "float64", [shard((2, 3), [byts("float64"), zstd(1)], "end")],
             fill=-1.5, regions=[], **sh),
        # crc32c over the whole shard: tensorstore can neither write nor read it (see top).
        case("/sharding/crc32c_after_shard", "int32", [shard((2, 3), [byts("int32")], "end"), CRC],
             writers=("zarr-python",),
             skip_readers={"tensorstore": "rejects a bytes->bytes codec after sharding_indexed"}, **sh),
    ]
    return c


# ---------------------------------------------------------------------------------------------
# Expected stored chain per writer (see top)
# ---------------------------------------------------------------------------------------------

def normalise(codecs, writer, dtype):
    out = []
    for cd in codecs:
        cd = json.loads(json.dumps(cd))
        config = cd.get("configuration")
        if cd["name"] == "zstd":
            config.setdefault("checksum", False)
        elif cd["name"] == "blosc" and writer == "zarr-python":
            config.setdefault("typesize", np.dtype(dtype).itemsize)
        elif cd["name"] == "blosc" and config["shuffle"] == "noshuffle":
            config.pop("typesize", None)
        elif cd["name"] == "sharding_indexed":
            config["codecs"] = normalise(config["codecs"], writer, dtype)
            config["index_codecs"] = normalise(config["index_codecs"], writer, "uint64")
            if writer == "zarr-python":
                config.setdefault("index_location", "end")
            elif config.get("index_location") == "end":
                del config["index_location"]
        out.append(cd)
    return out


def check_codecs(store_dir, c, writer):
    with open(os.path.join(fs_path(store_dir, c["path"]), "zarr.json")) as f:
        stored = json.load(f)["codecs"]
    want = normalise(c["codecs"], writer, c["dtype"])
    if stored != want:
        raise SystemExit(f"{writer} {c['path']}: stored codec chain\n  {json.dumps(stored)}\n"
                         f"is not the intended\n  {json.dumps(want)}")


# ---------------------------------------------------------------------------------------------
# Writers and readers
# ---------------------------------------------------------------------------------------------

def write_zarr_python(store_dir, c, data):
    root = zarr.open_group(store_dir, mode="a", zarr_format=3)
    parent = root
    *groups, name = c["path"].strip("/").split("/")
    for g in groups:
        parent = parent.require_group(g)
    objs = [get_codec_class(cd["name"]).from_dict(cd) for cd in c["codecs"]]
    filters = [o for o in objs if isinstance(o, ArrayArrayCodec)]
    serializer = [o for o in objs if isinstance(o, ArrayBytesCodec)]
    compressors = [o for o in objs if isinstance(o, BytesBytesCodec)]
    assert objs == filters + serializer + compressors and len(serializer) == 1, c["path"]
    fill = fill_to_numpy(c["dtype"], c["fill"])[0]
    arr = parent.create_array(name, shape=c["shape"], chunks=c["chunks"], dtype=c["dtype"], fill_value=fill,
                              filters=filters or None, serializer=serializer[0],
                              compressors=compressors or None,
                              chunk_key_encoding={"name": "default", "separator": "/"})
    for sl in region_slices(c):
        arr[sl] = data[sl]


def write_tensorstore(store_dir, c, data):
    parts = c["path"].strip("/").split("/")
    for i in range(len(parts)):  # tensorstore writes no group metadata
        d = os.path.join(store_dir, *parts[:i])
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "zarr.json"), "w") as f:
            json.dump(GROUP_JSON, f, indent=2)
    metadata = {
        "data_type": c["dtype"], "shape": list(c["shape"]),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(c["chunks"])}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "codecs": c["codecs"], "fill_value": c["fill"],
    }
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": fs_path(store_dir, c["path"]) + "/"},
            "metadata": metadata}
    t = ts.open(spec, create=True).result()
    for sl in region_slices(c):
        t[sl].write(data[sl]).result()


def read_zarr_python(store_dir, path):
    return zarr.open_array(store=store_dir, path=path.strip("/"), mode="r", zarr_format=3)[...]


def read_tensorstore(store_dir, path):
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": fs_path(store_dir, path) + "/"}}
    return ts.open(spec, read=True).result().read().result()


WRITERS = {
    "zarr-python": ("zarr_python.zarr", write_zarr_python, read_zarr_python),
    "tensorstore": ("tensorstore.zarr", write_tensorstore, read_tensorstore),
}


def main():
    import warnings  # zarr-python warns about crc32c after sharding; the case is deliberate
    warnings.filterwarnings("ignore", category=UserWarning, module="zarr")
    write_all("write_codec_fixtures.py", WRITERS, build_cases, check_codecs)


if __name__ == "__main__":
    main()
