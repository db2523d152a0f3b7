"""A reader process beside a writer process that commits multi-array transactions
(``crash_child.write_transactions``): a snapshot never shows part of a transaction.

This test process is the reader; the writer is a child process. On redb both open the file with
``multi_process=True`` (without it the second is refused); LMDB needs no flag.

- Every ``store.snapshot()`` holds exactly one transaction's state: arrays a, b, c, a's
  attribute and the extra arrays all agree (``check_state``), so a snapshot showing half a
  transaction fails the test.
- Plain reads through a read-only store are each one commit, but separate reads are separate
  commits: reading a and then b may see two transactions, and even one array's chunks, read by
  zarr-python one by one, may come from different transactions. What holds for them: every chunk
  is one transaction's value, and a read never goes back in time (every chunk of a later read is
  at least every chunk of an earlier one). The test checks that and prints how often a plain a
  and b disagreed, which is why agreement needs a snapshot.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import zarr
from crash_child import CHUNK, check_state, fork_server, initialise, write_transactions

from zarrdb import ZarrdbStore

TRANSACTIONS = 150


def _chunk_values(values: np.ndarray) -> list[int]:
    """The value of each chunk of a whole-array write (a or b), checking each chunk is uniform."""
    chunks = values.reshape(-1, CHUNK)
    assert (chunks == chunks[:, :1]).all(), f"a chunk mixes transactions: {values.tolist()}"
    return chunks[:, 0].tolist()


@pytest.mark.parametrize("backend", ["redb", "lmdb"])
def test_reader_process_never_sees_half_a_transaction(tmp_path: Path, backend: str) -> None:
    path = tmp_path / f"shared.{backend}"
    multi_process = backend == "redb"
    store = ZarrdbStore(path, backend=backend, multi_process=multi_process)  # type: ignore[arg-type]
    initialise(store)
    reader = store.with_read_only(True)

    writer = fork_server().Process(
        target=write_transactions,
        args=(None, str(path), backend, multi_process, TRANSACTIONS),
        daemon=True,
    )
    writer.start()
    seen: set[int] = set()
    plain_reads = disagreements = 0
    latest = 0  # the highest chunk value any completed plain read returned
    try:
        while writer.is_alive():
            seen.add(check_state(reader.snapshot()))

            a = _chunk_values(zarr.open_array(reader, path="a", mode="r")[:])
            b = _chunk_values(zarr.open_array(reader, path="b", mode="r")[:])
            assert min(a) >= latest, f"a read went back in time: {a} after {latest}"
            assert min(b) >= max(a), f"b read after a went back in time: {b} after {a}"
            latest = max(b)
            plain_reads += 1
            disagreements += set(a) != set(b)
        writer.join(120)
    finally:
        if writer.is_alive():
            writer.kill()
            writer.join()
    assert writer.exitcode == 0, "the writer failed (its traceback is on stderr)"
    assert check_state(reader.snapshot()) == TRANSACTIONS
    print(
        f"\n{backend}: {len(seen)} distinct transactions seen in snapshots; "
        f"{disagreements} of {plain_reads} plain reads of a and b disagreed"
    )
    # The reads overlapped the writer's commits, or the test proved nothing.
    assert len(seen) >= 2, f"the reader saw only transactions {seen}"
