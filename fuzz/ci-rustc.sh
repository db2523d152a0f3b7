#!/usr/bin/env bash
# The RUSTC_WRAPPER of fuzz/ci.sh: cargo runs every rustc through it. The compilations of zarrdb
# and of this crate (library and targets, not build scripts) get the instrumentation flags in
# ZARRDB_FUZZ_CI_RUSTFLAGS; every dependency builds as in a plain release build, which saves their
# instrumented compile in CI (cargo-fuzz, for the long campaigns, instruments them all).
set -euo pipefail
case "${CARGO_PKG_NAME:-}:${CARGO_CRATE_NAME:-}" in
    *:build_script_*) ;;
    zarrdb:* | zarrdb-fuzz:*)
        # Word splitting is wanted: the variable holds a list of flags.
        # shellcheck disable=SC2086
        exec "$@" $ZARRDB_FUZZ_CI_RUSTFLAGS
        ;;
esac
exec "$@"
