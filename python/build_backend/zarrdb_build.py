"""The build backend of the ``zarrdb`` package: maturin's, refusing at once to build without Rust.

maturin's own backend, finding no ``cargo``, downloads rustup and a whole toolchain into a cache
and builds for minutes without a word about it. zarrdb's extension is Rust, so a build from source
needs Rust installed; without it the build stops here, before anything is downloaded, and says
what to install or that a built wheel installs without Rust (docs/python.md).
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import maturin

_NO_CARGO = """
zarrdb: cannot build from source: `cargo` (Rust) is not on PATH.

zarrdb's extension module is written in Rust. Either
  - install a built wheel, which needs no Rust:  pip install zarrdb-<version>-cp311-abi3-<platform>.whl
    (`bash scripts/test.sh` or `maturin build --release -m python/Cargo.toml` makes one under
    target/wheels/), or
  - install Rust 1.85 or later (https://rustup.rs or the system's package manager) and run
    `pip install ./python` again.

No Rust toolchain is downloaded for you (docs/python.md, "Installing").
"""


def _require_cargo() -> None:
    # maturin's backend downloads a toolchain when this is unset and cargo is missing.
    os.environ["MATURIN_NO_INSTALL_RUST"] = "1"
    if shutil.which("cargo") is None:
        raise SystemExit(_NO_CARGO)


def _guarded(name: str) -> Any:
    hook = getattr(maturin, name)

    def guarded(*args: Any, **kwargs: Any) -> Any:
        _require_cargo()
        return hook(*args, **kwargs)

    guarded.__name__ = name
    guarded.__doc__ = hook.__doc__
    return guarded


# Every PEP 517 / PEP 660 hook maturin provides, each checking for cargo first.
_HOOKS = (
    "get_requires_for_build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_editable",
    "prepare_metadata_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "build_wheel",
    "build_sdist",
    "build_editable",
)
for _name in _HOOKS:
    if hasattr(maturin, _name):
        globals()[_name] = _guarded(_name)
