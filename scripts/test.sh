#!/usr/bin/env bash
# The project's one test command: `scripts/test.sh [cargo test args...]`, from any directory.
#
# The interop tests (tests/interop.rs) need zarr-python and tensorstore to write and read
# fixtures, so this first makes sure .venv at the repository root holds exactly the pinned
# tests/interop/requirements.txt and python/requirements-test.txt, then runs every cargo test
# target with ZARRDB_PYTHON pointing at that venv's python. Last, it builds the Python package
# (python/) once as an abi3 wheel and runs its tests with pytest in that venv (Python 3.11,
# zarr-python 3.1) and in .venv-zarr34 (Python 3.13, zarr-python 3.4).
# Needs python3 (with venv), Python 3.13 (PATH or pyenv) and cargo on the machine.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

# `pinned_venv VENV PYTHON REQUIREMENTS...`: make VENV (with PYTHON) hold exactly the pinned
# REQUIREMENTS. A stamp holds the hash of the requirements the venv was last installed from: a venv
# that is missing, broken (no python), or installed from other requirements is rebuilt from
# scratch, so a removed or downgraded pin cannot linger.
pinned_venv() {
    local venv="$1" python="$2"
    shift 2
    local stamp="$venv/.requirements.sha256" want have
    want="$(cat "$@" | sha256sum | cut -d' ' -f1)"
    have="$(cat "$stamp" 2>/dev/null || true)"
    if [[ ! -x "$venv/bin/python" || "$have" != "$want" ]]; then
        echo "scripts/test.sh: installing $* into $venv ($("$python" --version))" >&2
        rm -rf "$venv"
        "$python" -m venv "$venv"
        local args=()
        for requirements in "$@"; do args+=(-r "$requirements"); done
        "$venv/bin/python" -m pip install -q --disable-pip-version-check "${args[@]}"
        # Written last: an interrupted install leaves no stamp and is redone next time.
        echo "$want" >"$stamp"
    fi
}

venv="$repo/.venv"
pinned_venv "$venv" python3 "$repo/tests/interop/requirements.txt" "$repo/python/requirements-test.txt"

# The Python suite's second interpreter, Python 3.13, from PATH or pyenv: found (or its absence
# reported) before the long cargo run.
python313="${ZARRDB_PYTHON313:-}"
if [[ -z "$python313" ]]; then
    if command -v python3.13 >/dev/null && python3.13 -c '' 2>/dev/null; then
        python313="$(command -v python3.13)"
    elif command -v pyenv >/dev/null && pyenv prefix 3.13 >/dev/null 2>&1; then
        python313="$(pyenv prefix 3.13)/bin/python3.13"
    else
        python313="$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3.13 2>/dev/null | sort -V | tail -n 1 || true)"
    fi
fi
if [[ -z "$python313" || ! -x "$python313" ]]; then
    echo "scripts/test.sh: Python 3.13 not found (for the zarr-python 3.4 run of python/tests):" \
        "install it (pyenv install 3.13, or the system's python3.13 with venv) or set ZARRDB_PYTHON313" >&2
    exit 1
fi
export ZARRDB_PYTHON="$venv/bin/python"
# The zarr-python 3.4 venv, made before the cargo run: tests/interop_zarr34.rs writes and reads with it.
venv34="$repo/.venv-zarr34"
pinned_venv "$venv34" "$python313" "$repo/python/requirements-zarr34.txt"
export ZARRDB_PYTHON_ZARR34="$venv34/bin/python"
# moto's S3 server, the second S3 implementation (tests/bucket_moto.rs), in a venv of its own.
venv_moto="$repo/.venv-moto"
pinned_venv "$venv_moto" python3 "$repo/tests/interop/requirements-moto.txt"
export ZARRDB_MOTO_SERVER="$venv_moto/bin/moto_server"
# --all-targets covers the library, binary, integration tests and benches (smoke mode) but not
# doc tests, so the rustdoc examples run in a second step.
# The optional `ndarray` feature is on, so its code and examples are built and tested too.
cargo test --all-targets --features ndarray "$@"
cargo test --doc --features ndarray "$@"

# The Python package: ONE abi3 wheel (cp311-abi3: any CPython >= 3.11), built once by the pinned
# maturin into target/wheels/ (release, reusing the workspace's target/), then installed into two
# venvs and tested on each: .venv (Python 3.11, zarr-python 3.1.x, the pins above) and
# .venv-zarr34 (Python 3.13, the newest zarr-python 3.4.x: python/requirements-zarr34.txt).
# Reinstalled every run, because its version number does not change with the sources.
wheels="$repo/target/wheels"
mkdir -p "$wheels"
rm -f "$wheels"/zarrdb-*.whl
"$venv/bin/maturin" build --release --quiet -m "$repo/python/Cargo.toml" -i "$venv/bin/python" \
    --compatibility off --out "$wheels"
wheel=("$wheels"/zarrdb-*-abi3-*.whl)
if [[ ${#wheel[@]} -ne 1 || ! -f "${wheel[0]}" ]]; then
    echo "scripts/test.sh: expected one abi3 wheel in $wheels, found: ${wheel[*]}" >&2
    exit 1
fi

for python in "$venv/bin/python" "$venv34/bin/python"; do
    "$python" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall "${wheel[0]}"
    echo "scripts/test.sh: python/tests on $("$python" --version), zarr $("$python" -c 'import zarr; print(zarr.__version__)')" >&2
    start=$SECONDS
    "$python" -m pytest -q -p no:cacheprovider "$repo/python/tests"
    echo "scripts/test.sh: python/tests on $("$python" --version) took $((SECONDS - start)) s" >&2
done
