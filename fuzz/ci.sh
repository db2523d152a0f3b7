#!/usr/bin/env bash
# CI's bounded fuzzing: every target of this crate for SECONDS (default 15) under libFuzzer,
# without cargo-fuzz and without AddressSanitizer, so a fresh clone needs only the stable
# toolchain and a C++ compiler (libfuzzer-sys compiles libFuzzer).
#
#   fuzz/ci.sh [SECONDS] [TARGET...]
#
# One `cargo build` of the crate with the coverage instrumentation `cargo fuzz build` asks rustc
# for (cargo-fuzz 0.13's defaults without ASan, which needs nightly flags), then each target's
# binary runs as libFuzzer over a copy of its committed seeds (fuzz/seeds/ is never written). A
# crash, panic, timeout or out-of-memory input is saved under fuzz/artifacts/ci/<target>/, its
# path printed, and the script fails after every target has run.
# The long campaigns keep `cargo fuzz run` with ASan (fuzz/run.sh, fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")"

seconds=${1:-15}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^zarrdb-fuzz$')
fi

# The coverage flags of cargo-fuzz 0.13 (sanitizer-coverage level 4 with inline 8-bit counters,
# the PC table, comparison tracing and stack depth; debug assertions and overflow checks).
# --target keeps them away from build scripts and proc macros (which would not link without
# libFuzzer), as cargo-fuzz does; its own target dir keeps this build from replacing cargo-fuzz's
# (fuzz/target/<triple>/release) or the other way round.
flags=(
    --cfg fuzzing
    -Cpasses=sancov-module
    -Cllvm-args=-sanitizer-coverage-level=4
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
    -Cllvm-args=-sanitizer-coverage-pc-table
    -Cllvm-args=-sanitizer-coverage-trace-compares
    -Cllvm-args=-sanitizer-coverage-stack-depth
    -Cllvm-args=-simplifycfg-branch-fold-threshold=0
    -Cdebug-assertions
    -Coverflow-checks
)
triple=$(rustc -vV | sed -n 's/^host: //p')
target_dir=target/ci
echo "== fuzz build (${#targets[@]} targets, $triple)"
start=$SECONDS
bins=()
for target in "${targets[@]}"; do
    bins+=(--bin "$target")
done
RUSTFLAGS="${flags[*]}" cargo build --locked --release --target "$triple" --target-dir "$target_dir" \
    --config 'profile.release.debug="line-tables-only"' "${bins[@]}"
echo "built in $((SECONDS - start)) s"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=()
for target in "${targets[@]}"; do
    echo "== $target: ${seconds} s"
    corpus="$work/$target"
    cp -r "seeds/$target" "$corpus"
    artifacts="artifacts/ci/$target"
    mkdir -p "$artifacts"
    touch "$work/start"
    # Without ASan libFuzzer cannot hook malloc, so -malloc_limit_mb is not enforced here; the
    # resident-memory limit is. The progress lines of new inputs and libFuzzer's notes on the
    # missing sanitizer are left out of the log.
    set +e
    "$target_dir/$triple/release/$target" "$corpus" -max_total_time="$seconds" \
        -rss_limit_mb=2048 -timeout=30 -artifact_prefix="$artifacts/" -print_final_stats=1 2>&1 |
        grep -v -E '^(#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)|[[:space:]]+NEW_FUNC|WARNING: Failed to find function "__sanitizer)'
    status=${PIPESTATUS[0]}
    set -e
    if [ "$status" -ne 0 ]; then
        failed+=("$target")
        # Only what this run saved: inputs of earlier local runs stay where they are.
        find "$artifacts" -type f -newer "$work/start" | while read -r input; do
            echo "reproduce: fuzz/$target_dir/$triple/release/$target fuzz/$input" >&2
        done
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz targets that failed: ${failed[*]} (inputs in fuzz/artifacts/ci/)" >&2
    exit 1
fi
echo "every fuzz target ran ${seconds} s without a finding"
