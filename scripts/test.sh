#!/usr/bin/env bash
# The project's one test command: `scripts/test.sh [cargo test args...]`, from any directory.
#
# The interop tests (tests/interop.rs) need zarr-python and tensorstore to write and read
# fixtures, so this first makes sure .venv at the repository root holds exactly the pinned
# tests/interop/requirements.txt and python/requirements-test.txt, then runs every cargo test
# target with ZARRDB_PYTHON pointing at that venv's python. Last, it builds the Python package
# (python/, one release build of the extension) into that venv and runs its tests with pytest.
# Needs only python3 (with venv) and cargo on the machine.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

requirements="$repo/tests/interop/requirements.txt"
python_requirements="$repo/python/requirements-test.txt"
venv="$repo/.venv"
stamp="$venv/.requirements.sha256"

# The stamp holds the hash of the requirements the venv was last installed from: a venv that is
# missing, broken (no python), or installed from other requirements is rebuilt from scratch, so a
# removed or downgraded pin cannot linger.
want="$(cat "$requirements" "$python_requirements" | sha256sum | cut -d' ' -f1)"
have="$(cat "$stamp" 2>/dev/null || true)"
if [[ ! -x "$venv/bin/python" || "$have" != "$want" ]]; then
    echo "scripts/test.sh: installing $requirements into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements" -r "$python_requirements"
    # Written last: an interrupted install leaves no stamp and is redone next time.
    echo "$want" >"$stamp"
fi

export ZARRDB_PYTHON="$venv/bin/python"
# --all-targets covers the library, binary, integration tests and benches (smoke mode) but not
# doc tests, so the rustdoc examples run in a second step.
# The optional `ndarray` feature is on, so its code and examples are built and tested too.
cargo test --all-targets --features ndarray "$@"
cargo test --doc --features ndarray "$@"

# The Python package: no build isolation, so the pinned maturin builds it (offline-friendly) into
# the workspace's target/ (release), reusing what cargo built. Reinstalled every run, because its
# version number does not change with the sources. maturin's build hook runs the `maturin` command,
# which is found through PATH only.
PATH="$venv/bin:$PATH" "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
    --force-reinstall "$repo/python"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/python/tests"
