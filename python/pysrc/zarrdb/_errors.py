"""Errors raised by the Python half of the package, with the attributes the native ones carry
(``kind``, ``key``, ``node``, ``path``, ``operation``: see ``zarrdb.Error``)."""

from __future__ import annotations

from typing import TypeVar

from . import _native

__all__ = ["TransactionClosedError", "error"]

E = TypeVar("E", bound=_native.Error)


def error(
    cls: type[E],
    message: str,
    *,
    kind: str,
    key: str | None = None,
    node: str | None = None,
    path: str | None = None,
    operation: str | None = None,
) -> E:
    """An exception of class ``cls`` with ``message`` and these attributes."""
    exception = cls(message)
    exception.kind = kind
    exception.key = key
    exception.node = node
    exception.path = path
    exception.operation = operation
    return exception


class TransactionClosedError(_native.TransactionError, ValueError):
    """A transaction's store used after its transaction committed or aborted (kind
    "transaction_closed"). Also a ``ValueError``, as zarr-python expects of a closed store."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.kind = "transaction_closed"
        self.key = None
        self.node = None
        self.path = path
        self.operation = None
