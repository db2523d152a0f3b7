"""``ZarrdbStore.staged_write()``: many processes write, ``main`` gains one version.

A dask cluster's workers cannot share one transaction: each task commits on its own. So the
tasks commit to a staging branch made at the target branch's head (each task's assignment one
commit there, rebased by the engine when another worker's commit came first), and the branch is
merged into the target branch at the end by a merge that never fast-forwards
(``Database::merge_commit``): the target moves once, by one merge commit whose first parent is
its old head and whose changes are what the tasks wrote, and its log shows that commit alone.
Readers of the target see its previous version, whole, until that merge; a reader opened on the
previous version (``base``) sees it for ever.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from . import _native

if TYPE_CHECKING:
    from ._store import ZarrdbStore

__all__ = ["StagedWrite"]

class StagedWrite:
    """A staged write into a database that keeps history: ``store`` is a store on a staging
    branch that every process may write (it pickles with its branch), and leaving the ``with``
    block merges the branch into the target branch as one commit, then deletes the branch.

    Attributes
    ----------
    store
        The store the writers write through (``ZarrdbStore(path, branch=branch)``).
    branch
        The staging branch's name.
    into
        The branch the write lands on (the opening store's branch, ``"main"`` by default).
    base
        The commit id of ``into``'s head when the staged write began: the previous version, which
        ``ZarrdbStore(path, version=base)`` reads unchanged during and after the write.
    outcome
        After the block: ``"merged"`` (one merge commit on ``into``) or ``"up_to_date"``
        (nothing was written). None before.
    commit
        After the block: the commit id ``into`` is at.
    """

    store: ZarrdbStore
    branch: str
    into: str
    base: str
    outcome: str | None
    commit: str | None

    def __init__(self, target: ZarrdbStore, message: str) -> None:
        self._target = target
        self._message = message
        self.into = target._head_name()
        self.branch = f"zarrdb-stage-{secrets.token_hex(6)}"
        self.outcome = None
        self.commit = None
        database = target._writable_handle().database
        self.base, _ = database.resolve(self.into)
        database.create_branch(self.branch, self.base)
        self.store = target._on_branch(self.branch)

    def __enter__(self) -> StagedWrite:
        return self

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        database = self._target._writable_handle().database
        self.store.close()
        if kind is not None:
            # Nothing reaches `into`; the branch's commits are collected once they expire.
            database.delete_branch(self.branch)
            return
        message = self._message or f"staged write {self.branch}"
        # A merge conflict (another writer changed the same keys of `into` meanwhile) raises
        # zarrdb.HistoryError "merge_conflict" and keeps the branch, to be merged by hand.
        self._target._arrays.clear()
        self.outcome, self.commit = database.merge(self.branch, self.into, message, False)
        database.delete_branch(self.branch)
