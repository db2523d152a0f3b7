#!/usr/bin/env python3
"""Check hierarchies against a fixture of transfer_write.py's manifest, with zarr-python AND
tensorstore; or extract a zip archive the way a Zarr reader sees it.

Usage:
    transfer_check.py check MANIFEST FIXTURE ROOT [ROOT ...] [--source]
    transfer_check.py unzip ZIP DEST [PREFIX]

`check` reads every node of the fixture FIXTURE (its name in MANIFEST) from each ROOT, a folder,
a `.zip` archive or an `s3://bucket/prefix` (on the server AWS_ENDPOINT names, zarr-python through
obstore, tensorstore through its s3 kvstore) holding a Zarr v3 hierarchy at its root (what
`zarrdb export` writes), and compares with the manifest:
  * groups: zarr-python opens the group; its attributes and its explicit children (zarr-python
    lists only children with a metadata document) equal the manifest's;
  * implicit groups: zarr-python finds no group there (no zarr.json), yet the arrays below open;
    a node with "imported_as" is checked as that node instead (except with --source);
  * arrays: zarr-python and tensorstore read the whole array; the C-order little-endian bytes
    equal the expected file exactly (so NaN payloads and -0.0 count), the shape and the
    attributes equal the manifest's (tensorstore's through its spec's "metadata").
An array's `export_skip_readers` names readers that cannot read it (see transfer_write.py).
A ROOT archive must also be what the export promises: entries stored (not deflated), no
duplicate names, the root zarr.json at the archive root.

With --source, ROOT is the fixture's own source, read in its own format (v3 or v2) under its
prefix; readers named in the fixture's `source_readers` are skipped, and the archive rules above
do not apply (the sources are meant to break them). This proves the checker on the fixtures.

`unzip` writes the entries of ZIP under PREFIX (a folder in the archive, default none) to DEST as
files, the last entry winning when a name occurs twice (what zarr-python reads), directory
entries skipped. It prints the number of names that occurred more than once.

Prints one line per difference and exits 1 if there was any.
"""

import json
import os
import sys
import warnings
import zipfile


def le_bytes(arr):
    """C-order little-endian bytes of a numpy array (byte swaps only, no value conversions)."""
    import numpy as np
    a = np.ascontiguousarray(np.asarray(arr))
    if a.dtype.itemsize > 1 and (a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and sys.byteorder == "big")):
        a = a.byteswap().view(a.dtype.newbyteorder("<"))
    return a.tobytes()


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def describe_difference(got, want):
    at = first_difference(got, want)
    return (f"{len(got)} bytes, expected {len(want)}; first difference at byte {at}: "
            f"got {got[at:at + 8].hex()} want {want[at:at + 8].hex()}")


class Root:
    """One hierarchy to read: a folder or a zip archive, a prefix inside it, a Zarr format."""

    def __init__(self, location, prefix, zarr_format):
        self.is_s3 = location.startswith("s3://")
        if self.is_s3:
            # s3://bucket/prefix: the bucket, and the prefix in front of the hierarchy's.
            self.bucket, _, outer = location[len("s3://"):].partition("/")
            prefix = outer.strip("/") + "/" + prefix
            self.location = location
        else:
            self.location = os.path.abspath(location)
        self.is_zip = location.endswith(".zip")
        self.prefix = prefix.strip("/")
        self.zarr_format = zarr_format
        self._store = None

    def key(self, path):
        """Store key (no leading slash) of a node path inside the hierarchy."""
        parts = [p for p in (self.prefix + "/" + path).split("/") if p]
        return "/".join(parts)

    def zarr_store(self):
        from zarr.storage import LocalStore, ZipStore
        if self._store is None:
            if self.is_s3:
                self._store = s3_store(self.bucket, "", read_only=True)
            elif self.is_zip:
                self._store = ZipStore(self.location, mode="r")
            else:
                self._store = LocalStore(self.location, read_only=True)
        return self._store

    def close(self):
        if self._store is not None:
            self._store.close()

    def tensorstore_spec(self, path):
        key = self.key(path)
        if self.is_s3:
            kvstore = s3_kvstore(self.bucket, key + "/")
        elif self.is_zip:
            kvstore = {"driver": "zip", "base": {"driver": "file", "path": self.location},
                       "path": key + "/" if key else ""}
        else:
            kvstore = {"driver": "file", "path": os.path.join(self.location, key) + "/"}
        return {"driver": "zarr3" if self.zarr_format == 3 else "zarr", "kvstore": kvstore}


def s3_store(bucket, prefix, read_only):
    """zarr-python's store for s3://bucket/prefix on the server the AWS_* variables name (the
    tests' SeaweedFS), through obstore."""
    from obstore.store import S3Store
    from zarr.storage import ObjectStore
    remote = S3Store(bucket, prefix=prefix or None, endpoint=os.environ["AWS_ENDPOINT"],
                     region=os.environ["AWS_REGION"], access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                     secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"], virtual_hosted_style_request=False,
                     client_options={"allow_http": True})
    return ObjectStore(remote, read_only=read_only)


def s3_kvstore(bucket, path):
    """tensorstore's kvstore for s3://bucket/path on the same server (credentials from AWS_*)."""
    return {"driver": "s3", "bucket": bucket, "path": path, "endpoint": os.environ["AWS_ENDPOINT"],
            "aws_region": os.environ["AWS_REGION"], "aws_credentials": {"type": "environment"}}


def zip_rules(location):
    """What an exported archive must be; a list of problems."""
    with zipfile.ZipFile(location) as zf:
        infos = zf.infolist()
    names = [i.filename for i in infos]
    problems = []
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        problems.append(f"duplicate entries {dups[:5]}")
    deflated = [i.filename for i in infos if i.compress_type != zipfile.ZIP_STORED]
    if deflated:
        problems.append(f"entries not stored: {deflated[:5]}")
    if "zarr.json" not in names:
        problems.append(f"no zarr.json at the archive root (first names: {names[:5]})")
    bad = [n for n in names if n.startswith("/") or "\\" in n or ".." in n.split("/")]
    if bad:
        problems.append(f"unsafe names {bad[:5]}")
    return problems


def children(nodes, path, implicit=False):
    """Names of the direct children of a group path in the manifest: the explicit ones (with
    metadata), and the implicit groups too when `implicit`."""
    prefix = path.rstrip("/") + "/"
    out = set()
    for p, node in nodes.items():
        if p != "/" and p.startswith(prefix) and "/" not in p[len(prefix):]:
            if implicit or node["node_type"] != "implicit":
                out.add(p[len(prefix):])
    return out


def check_zarr_python(root, nodes, base, fail):
    import zarr
    from zarr.errors import GroupNotFoundError
    store = root.zarr_store()
    for path, node in sorted(nodes.items()):
        kind, key = node["node_type"], root.key(path)
        where = f"zarr-python {path}"
        try:
            if kind == "group":
                g = zarr.open_group(store, path=key, mode="r", zarr_format=root.zarr_format)
                if dict(g.attrs) != node["attributes"]:
                    fail(f"{where}: attributes {dict(g.attrs)} != expected {node['attributes']}")
                with warnings.catch_warnings():
                    # zarr-python warns about each implicit child it cannot list.
                    warnings.simplefilter("ignore")
                    got = set(g.keys())
                # A group with consolidated metadata (the root of a zarrdb export) lists its
                # implicit children from it, as groups; otherwise zarr-python cannot see them.
                consolidated = getattr(g.metadata, "consolidated_metadata", None) is not None
                want = children(nodes, path, implicit=consolidated)
                if got != want:
                    fail(f"{where}: children {sorted(got)} != expected {sorted(want)}")
            elif kind == "implicit":
                try:
                    zarr.open_group(store, path=key, mode="r", zarr_format=root.zarr_format)
                    fail(f"{where}: an implicit group has metadata after the round trip")
                except (GroupNotFoundError, FileNotFoundError, KeyError):
                    pass
            else:
                if "zarr-python" in node.get("skip", {}):
                    continue
                a = zarr.open_array(store, path=key, mode="r", zarr_format=root.zarr_format)
                check_array(where, a[...], list(a.shape), dict(a.attrs), node, base, fail)
        except Exception as err:  # one line per failure, keep checking the rest
            fail(f"{where}: {type(err).__name__}: {err}")


def check_tensorstore(root, nodes, base, fail):
    import tensorstore as ts
    for path, node in sorted(nodes.items()):
        if node["node_type"] != "array" or "tensorstore" in node.get("skip", {}):
            continue
        where = f"tensorstore {path}"
        try:
            t = ts.open(root.tensorstore_spec(path), read=True).result()
            # The zarr (v2) driver has no attributes; zarr-python checks .zattrs.
            attrs = t.spec().to_json().get("metadata", {}).get("attributes", {}) if root.zarr_format == 3 \
                else node["attributes"]
            check_array(where, t.read().result(), list(t.shape), attrs, node, base, fail)
        except Exception as err:
            fail(f"{where}: {type(err).__name__}: {err}")


def check_array(where, values, shape, attrs, node, base, fail):
    if shape != node["shape"]:
        fail(f"{where}: shape {shape} != expected {node['shape']}")
        return
    with open(os.path.join(base, node["expected"]), "rb") as f:
        want = f.read()
    got = le_bytes(values)
    if got != want:
        fail(f"{where}: values differ: {describe_difference(got, want)}")
    if attrs != node["attributes"]:
        fail(f"{where}: attributes {attrs} != expected {node['attributes']}")


def check(args):
    source = "--source" in args
    args = [a for a in args if a != "--source"]
    if len(args) < 3:
        raise SystemExit(__doc__)
    manifest_path, name, locations = args[0], args[1], args[2:]
    base = os.path.dirname(os.path.abspath(manifest_path))
    with open(manifest_path) as f:
        fixtures = {fx["name"]: fx for fx in json.load(f)["fixtures"]}
    if name not in fixtures:
        raise SystemExit(f"transfer_check: no fixture {name!r} in {manifest_path}")
    fx = fixtures[name]
    failures = []
    for location in locations:
        if source:
            if fx["format"] not in ("v3", "v2"):
                raise SystemExit(f"transfer_check: no library reads a {fx['format']} source")
            root = Root(location, fx["prefix"], 3 if fx["format"] == "v3" else 2)
            skip = fx["source_readers"]
        else:
            root = Root(location, "", 3)
            skip = {}
        # After import, a node with "imported_as" is that node instead (a draft's implicit group).
        nodes = {p: n if source else n.get("imported_as", n) for p, n in fx["nodes"].items()}
        nodes = {p: dict(n, skip=dict(skip, **(n.get("export_skip_readers", {}) if not source else {})))
                 for p, n in nodes.items()}

        def fail(msg, location=location):
            failures.append(f"FAIL {name} {location}: {msg}")
            print(failures[-1])

        if root.is_zip and not source:
            for problem in zip_rules(root.location):
                fail(f"archive: {problem}")
        try:
            check_zarr_python(root, nodes, base, fail)
            if "tensorstore" not in skip:
                check_tensorstore(root, nodes, base, fail)
        finally:
            root.close()
    arrays = sum(1 for n in fx["nodes"].values() if n["node_type"] == "array")
    if failures:
        print(f"transfer_check {name}: {len(failures)} differences")
        sys.exit(1)
    print(f"transfer_check {name}: {len(fx['nodes'])} nodes ({arrays} arrays) ok in {len(locations)} hierarchies")


def unzip(args):
    if len(args) not in (2, 3):
        raise SystemExit(__doc__)
    archive, dest = args[0], args[1]
    prefix = args[2].strip("/") + "/" if len(args) == 3 and args[2].strip("/") else ""
    with zipfile.ZipFile(archive) as zf:
        names = [i.filename for i in zf.infolist()]
        latest = {i.filename: i for i in zf.infolist()}  # later entries replace earlier ones
        for entry_name, info in latest.items():
            if info.is_dir() or not entry_name.startswith(prefix):
                continue
            rel = entry_name[len(prefix):]
            parts = rel.split("/")
            if not rel or rel.startswith("/") or ".." in parts or "" in parts:
                raise SystemExit(f"transfer_check unzip: unsafe entry name {entry_name!r}")
            target = os.path.join(dest, *parts)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(zf.read(info))
    print(sum(1 for n in set(names) if names.count(n) > 1))


def exit_without_finalizing(main):
    """Run ``main``, then end the process at once with its exit code, skipping the interpreter's
    finalization. The S3 store (obstore) keeps a Rust runtime whose worker threads can abort the
    process (SIGABRT) while Python tears itself down, after every call of the script succeeded:
    seen once in a CI run of ``s3_write.py``. What the script wrote or compared is done and
    flushed by then; the tests check the data itself afterwards."""
    import traceback

    code = 0
    try:
        main()
    except SystemExit as e:
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
            code = 1
        else:
            code = e.code or 0
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("check", "unzip"):
        raise SystemExit(__doc__)
    (check if sys.argv[1] == "check" else unzip)(sys.argv[2:])


if __name__ == "__main__":
    exit_without_finalizing(main)
