#!/usr/bin/env bash
# The reliability suite's bounded CI mode (issue 5, items 1 and 4):
#   1. fuzzing: every cargo-fuzz target for 20 s (fuzz/run.sh; builds the targets first);
#   2. FFI misuse under AddressSanitizer + LeakSanitizer (tests/c/misuse.sh asan): the C
#      misuse and API tests built with -fsanitize=address against libhearth.a.
# The valgrind half of item 4 runs in tests/c/run.sh. Long fuzzing: fuzz/run.sh --seconds 1800.
#
# Env: FUZZ_SECONDS (default 20) per target; MISUSE_MODES (default "asan asan-rust"; "asan-rust" compiles
# the Rust side with -Zsanitizer=address, several minutes on a cold target/asan-ffi).
# Ends with "reliability: N passed, N failed" (N = parts).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
passed=0
failed=0
step() {
    local name="$1"
    shift
    echo "==== $name"
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "==== $name FAILED" >&2
    fi
}

step "fuzzing (${FUZZ_SECONDS:-20}s per target)" "$root/fuzz/run.sh" --seconds "${FUZZ_SECONDS:-20}"
step "libhearth for the C tests" cargo build --locked --manifest-path "$root/Cargo.toml" -p hearth-ffi -p hearth-mock-llm
# shellcheck disable=SC2086 # MISUSE_MODES is a word list
step "FFI misuse under sanitizers" "$root/tests/c/misuse.sh" ${MISUSE_MODES:-asan asan-rust}

echo "reliability: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
