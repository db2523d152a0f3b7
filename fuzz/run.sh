#!/usr/bin/env bash
# Build every fuzz target and run each for SECONDS (default 20), one after the other, under the
# limits every run uses: no input may take more than 2 GiB of memory (resident, or in one
# allocation) or 30 s. Each target starts from its committed seeds (fuzz/seeds/<target>/) and the
# inputs earlier runs kept (fuzz/corpus/<target>/, not committed). A crash, leak, timeout or
# over-limit allocation is saved under fuzz/artifacts/<target>/ and fails the script after every
# target has run.
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# cargo-fuzz needs nightly-only compiler flags: the toolchain in use (stable included) is told to
# accept them with RUSTC_BOOTSTRAP=1. cargo-fuzz itself is installed from crates.io when missing.
set -euo pipefail
cd "$(dirname "$0")"

seconds=${1:-20}
shift || true
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== cargo install cargo-fuzz"
    cargo install --locked cargo-fuzz --version 0.13.2
fi

echo "== cargo fuzz build"
start=$SECONDS
cargo fuzz build
echo "built in $((SECONDS - start)) s"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo fuzz list)
fi

failed=()
for target in "${targets[@]}"; do
    echo "== $target: ${seconds} s"
    mkdir -p "corpus/$target"
    # The progress lines of new inputs are left out of the log; everything else stays.
    set +e
    cargo fuzz run "$target" "corpus/$target" "seeds/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=30 \
        -print_final_stats=1 2>&1 | grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)'
    status=${PIPESTATUS[0]}
    set -e
    if [ "$status" -ne 0 ]; then
        failed+=("$target")
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz targets that failed: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
echo "every fuzz target ran ${seconds} s without a finding"
