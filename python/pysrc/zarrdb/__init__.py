"""zarrdb for Python: a zarr-python store over a zarrdb database.

One file holds a whole Zarr hierarchy, with ACID transactions across arrays and snapshots::

    import zarr, zarrdb
    store = zarrdb.ZarrdbStore("data.zarrdb")
    z = zarr.create_array(store, name="a", shape=(4,), dtype="int32")

See ``docs/python.md`` in the repository for the guarantees and what is missing.
"""

from ._native import (
    ArrayError,
    CodecError,
    CompactError,
    DiskFullError,
    Error,
    HistoryError,
    LockedError,
    MetadataError,
    NodeError,
    OpenError,
    StoreError,
    TransactionError,
    TransferError,
)
from ._errors import TransactionClosedError
from ._pipeline import CodecPipeline
from ._staging import StagedWrite
from ._store import Collection, Commit, ZarrdbStore

__all__ = [
    "ArrayError",
    "CodecError",
    "CodecPipeline",
    "Collection",
    "Commit",
    "CompactError",
    "DiskFullError",
    "Error",
    "HistoryError",
    "LockedError",
    "MetadataError",
    "NodeError",
    "OpenError",
    "StagedWrite",
    "StoreError",
    "TransactionClosedError",
    "TransactionError",
    "TransferError",
    "ZarrdbStore",
]
