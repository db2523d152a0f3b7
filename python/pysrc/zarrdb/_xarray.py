"""xarray's ``engine="zarrdb"``: ``xr.open_dataset("data.zarrdb", engine="zarrdb")``.

Declared in pyproject.toml under ``[project.entry-points."xarray.backends"]``, so xarray finds it
once zarrdb is installed; xarray also picks it by itself for a path ending in ``.zarrdb`` or
starting with ``zarrdb://`` (``str(store)``). It is xarray's own zarr backend over a
``ZarrdbStore``: ``xr.open_zarr`` hands a string to zarr-python, which opens it as a folder, so a
``.zarrdb`` path goes through this engine, or a store goes to ``xr.open_zarr`` itself
(``xr.open_zarr(zarrdb.ZarrdbStore(path))``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from xarray.backends.zarr import ZarrBackendEntrypoint

from ._store import SCHEME, ZarrdbStore, _strip_scheme, is_locator

__all__ = ["ZarrdbBackendEntrypoint"]


def _store(filename_or_obj: Any, mode: str) -> Any:
    """A ``ZarrdbStore`` for a path (``mode="r"``: read-only), anything else unchanged."""
    if not isinstance(filename_or_obj, str | os.PathLike):
        return filename_or_obj
    path = _strip_scheme(filename_or_obj)
    if mode == "r" and not is_locator(path) and not os.path.exists(path):
        # A read-only store on nothing reads as empty: say what is missing instead.
        raise FileNotFoundError(f"no zarrdb database at {os.path.abspath(path)!r}")
    return ZarrdbStore(path, read_only=mode == "r")


class ZarrdbBackendEntrypoint(ZarrBackendEntrypoint):
    """xarray's zarr backend over a ``ZarrdbStore`` opened from a ``.zarrdb`` path."""

    description = "Open zarrdb databases (.zarrdb) using zarr and zarrdb in Xarray"
    url = "docs/python.md (in the zarrdb repository)"

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        if isinstance(filename_or_obj, ZarrdbStore):
            return True
        if isinstance(filename_or_obj, str | os.PathLike):
            text = os.fspath(filename_or_obj)
            if isinstance(text, str) and (text.startswith(SCHEME) or is_locator(text)):
                return True
            return os.path.splitext(str(text).rstrip("/"))[1] == ".zarrdb"
        return False

    def open_dataset(  # type: ignore[override]
        self,
        filename_or_obj: Any,
        *,
        mask_and_scale: bool = True,
        decode_times: bool = True,
        concat_characters: bool = True,
        decode_coords: bool = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: bool | None = None,
        decode_timedelta: bool | None = None,
        group: str | None = None,
        mode: str = "r",
        consolidated: bool | None = None,
        zarr_format: int | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
        cache_members: bool = True,
    ) -> Any:
        return super().open_dataset(
            _store(filename_or_obj, mode),
            mask_and_scale=mask_and_scale,
            decode_times=decode_times,
            concat_characters=concat_characters,
            decode_coords=decode_coords,
            drop_variables=drop_variables,
            use_cftime=use_cftime,
            decode_timedelta=decode_timedelta,
            group=group,
            mode=mode,
            consolidated=consolidated,
            zarr_format=zarr_format,
            use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask,
            cache_members=cache_members,
        )

    def open_groups_as_dict(  # type: ignore[override]
        self,
        filename_or_obj: Any,
        *,
        mask_and_scale: bool = True,
        decode_times: bool = True,
        concat_characters: bool = True,
        decode_coords: bool = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: bool | None = None,
        decode_timedelta: bool | None = None,
        group: str | None = None,
        mode: str = "r",
        consolidated: bool | None = None,
        zarr_format: int | None = None,
    ) -> Any:
        # open_datatree goes through here.
        return super().open_groups_as_dict(
            _store(filename_or_obj, mode),
            mask_and_scale=mask_and_scale,
            decode_times=decode_times,
            concat_characters=concat_characters,
            decode_coords=decode_coords,
            drop_variables=drop_variables,
            use_cftime=use_cftime,
            decode_timedelta=decode_timedelta,
            group=group,
            mode=mode,
            consolidated=consolidated,
            zarr_format=zarr_format,
        )
