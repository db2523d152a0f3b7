"""A writer of numbered multi-array transactions, and the check that a database holds exactly one
of them whole.

Transaction n writes, through zarr-python inside ``with store.transaction()``:
- ``a[:] = n`` and ``b[:] = n`` (every chunk of both arrays),
- ``c[n % LENGTH] = n`` (one element: a partial chunk write),
- ``a.attrs["n"] = n`` when n is a multiple of 3 (a metadata document),
- a new array ``extra/<n>`` filled with n when n is a multiple of 5 (a new node).
So the whole state after transaction n is a function of n alone (``check_state``), and any mix of
two transactions makes the arrays disagree.

``write_transactions`` runs in a child process (multiprocessing, from a fork server that has
imported zarr already, so a child starts in milliseconds): it opens the database, reads the last
committed n (checking the state), and commits transactions n+1, n+2, ... (COUNT of them, or until
killed when COUNT is 0), sending one message per step through a pipe so that the parent can kill
it at a chosen point: ``("S", n)`` (started, state n), then for each transaction ``("B", n)``
(begun), ``("a", n)``, ``("b", n)``, ``("c", n)``, ``("attr", n)``, ``("extra", n)`` (that write
done), ``("W", n)`` (every write done, commit called next) and ``("C", n)`` (committed).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
from collections.abc import Callable
from multiprocessing.connection import Connection

import numpy as np
import zarr

from zarrdb import ZarrdbStore

LENGTH = 64
CHUNK = 16
DTYPE = "int64"


def initialise(store: ZarrdbStore) -> None:
    """The state of transaction 0: arrays a, b, c of zeros, a.attrs["n"] = 0, extra/0."""
    with store.transaction() as tx:
        root = zarr.open_group(tx, mode="w")
        for name in ("a", "b", "c"):
            root.create_array(name, shape=(LENGTH,), chunks=(CHUNK,), dtype=DTYPE, fill_value=0)
        root["a"].attrs["n"] = 0
        root.create_array("extra/0", shape=(4,), dtype=DTYPE, fill_value=0)[:] = 0


def write_transaction(tx: ZarrdbStore, n: int, report: Callable[[str], None]) -> None:
    """The writes of transaction n, through the transaction's store ``tx``."""
    root = zarr.open_group(tx, mode="r+")
    report("B")
    root["a"][:] = n
    report("a")
    root["b"][:] = n
    report("b")
    root["c"][n % LENGTH] = n
    report("c")
    if n % 3 == 0:
        root["a"].attrs["n"] = n
        report("attr")
    if n % 5 == 0:
        root.create_array(f"extra/{n}", shape=(4,), dtype=DTYPE, fill_value=0)[:] = n
        report("extra")
    report("W")


def expected_c(n: int) -> np.ndarray:
    """Array c after transaction n: element j holds the last m <= n with m % LENGTH == j."""
    c = np.zeros(LENGTH, dtype=DTYPE)
    for m in range(max(1, n - LENGTH + 1), n + 1):
        c[m % LENGTH] = m
    return c


def check_state(store: ZarrdbStore) -> int:
    """The n of the one transaction whose state ``store`` holds; AssertionError (saying what
    disagrees) when it holds a mix of transactions or anything else."""
    root = zarr.open_group(store, mode="r")
    a = root["a"][:]
    n = int(a[0])
    assert (a == n).all(), f"array a mixes transactions: {sorted(set(a.tolist()))}"
    b = root["b"][:]
    assert (b == n).all(), f"a holds transaction {n}, b holds {sorted(set(b.tolist()))}"
    c = root["c"][:]
    assert (c == expected_c(n)).all(), f"a holds transaction {n}, c does not: {c.tolist()}"
    attr = root["a"].attrs["n"]
    assert attr == n - n % 3, f"a holds transaction {n}, its attribute n is {attr}"
    extras = sorted(int(name) for name in root["extra"].array_keys())
    assert extras == list(range(0, n + 1, 5)), f"transaction {n} has extra arrays {extras}"
    newest = root[f"extra/{extras[-1]}"][:]
    assert (newest == extras[-1]).all(), f"extra/{extras[-1]} holds {newest.tolist()}"
    return n


def write_transactions(
    conn: Connection | None,
    path: str,
    backend: str,
    multi_process: bool,
    count: int,
    commit_log: bool = False,
) -> None:
    """The child process's work: commit ``count`` transactions (0: until killed) after the last
    one stored, reporting each step through ``conn`` (None: no reports). ``commit_log``: LMDB
    behind zarrdb's commit log."""
    store = ZarrdbStore(path, backend=backend, multi_process=multi_process, commit_log=commit_log)  # type: ignore[arg-type]
    n = check_state(store.snapshot())

    def report(tag: str) -> None:
        if conn is not None:
            conn.send((tag, n))

    report("S")
    done = 0
    while count == 0 or done < count:
        n += 1
        with store.transaction() as tx:
            write_transaction(tx, n, report)
        report("C")
        done += 1


def fork_server() -> multiprocessing.context.ForkServerContext:
    """The multiprocessing context whose children run ``write_transactions``: forked from a server
    that has imported zarr, numpy and zarrdb (and opened no database), so each starts at once."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["numpy", "zarr", "zarrdb", "crash_child"])
    return context
