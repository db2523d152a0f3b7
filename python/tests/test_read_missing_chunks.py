"""``array.read_missing_chunks=False`` (zarr-python 3.2+) with ``zarrdb.CodecPipeline``: a read
over a missing chunk raises zarr-python's ``ChunkNotFoundError``, a read of written chunks
returns them, as with zarr-python's own pipeline."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import zarr

from zarrdb import ZarrdbStore

errors = pytest.importorskip("zarr.errors")
if not hasattr(errors, "ChunkNotFoundError"):
    pytest.skip("zarr-python before 3.2 has no array.read_missing_chunks", allow_module_level=True)


@pytest.mark.parametrize("pipeline", ["zarrdb.CodecPipeline", "zarr.core.codec_pipeline.BatchedCodecPipeline"])
def test_read_missing_chunks_false(tmp_path: Path, pipeline: str) -> None:
    with zarr.config.set({"codec_pipeline.path": pipeline, "array.read_missing_chunks": False}):
        store = ZarrdbStore(tmp_path / "m.zarrdb")
        array = zarr.create_array(store, name="a", shape=(8,), chunks=(4,), dtype="int32", fill_value=0)
        array[0:4] = np.arange(4, dtype="int32")
        assert array[0:4].tolist() == [0, 1, 2, 3]
        with pytest.raises(errors.ChunkNotFoundError, match="c/1"):
            array[:]
