#!/usr/bin/env bash
# Builds the cargo-fuzz targets and runs each for a bounded time; fails on any crash, hang
# (a round not answered within 20 s, or libFuzzer's -timeout), leak or out-of-memory.
#
#   fuzz/run.sh                   each target 30 s (CI's bounded mode; scripts/reliability-ci.sh uses 20 s)
#   fuzz/run.sh --seconds 1800    the long run: 30 min per target (about 1.5 h in all)
#   fuzz/run.sh --target sse      only the named target(s) (repeatable)
#   fuzz/run.sh --replay          no fuzzing: run every saved input (corpus + regressions) once
#   fuzz/run.sh --leaks           also let libFuzzer run LeakSanitizer after inputs that
#                                 allocated more than they freed (about 3x slower here: the
#                                 engine keeps state between inputs, so nearly every input
#                                 triggers a full scan; leaks are otherwise the C misuse
#                                 suite's job: tests/c/misuse.sh)
#
# Targets: send (arbitrary bytes, one frame per line), send_structured (valid ACP envelopes
# with mutated params), sse (provider stream bodies through a real turn). See fuzz/README.md.
#
# Toolchain: cargo-fuzz needs nightly-only rustc flags (-Zsanitizer, sancov). With a
# `nightly` rustup toolchain it is used; without one the script falls back to the default
# (stable) toolchain with RUSTC_BOOTSTRAP=1, which accepts those flags. cargo-fuzz itself
# is installed from crates.io at the pinned version when missing.
#
# Outputs (all git-ignored): fuzz/target/ (build), fuzz/corpus-work/<target>/ (what
# libFuzzer learned, kept between runs and seeded from fuzz/corpus/<target>/),
# fuzz/artifacts/<target>/ (crash-*, timeout-*, oom-* reproducers), fuzz/target/logs/.
set -euo pipefail

CARGO_FUZZ_VERSION=0.13.2
seconds=30
replay=0
leaks=0
targets=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --seconds=*) seconds="${1#*=}"; shift ;;
        --target) targets+=("$2"); shift 2 ;;
        --replay) replay=1; shift ;;
        --leaks) leaks=1; shift ;;
        -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=(send send_structured sse)

fuzz_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$fuzz_dir"

if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
    echo "== installing cargo-fuzz $CARGO_FUZZ_VERSION"
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi

if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    toolchain=(+nightly)
    echo "== toolchain: nightly ($(rustc +nightly --version))"
else
    toolchain=()
    export RUSTC_BOOTSTRAP=1
    echo "== toolchain: no nightly installed; $(rustc --version) with RUSTC_BOOTSTRAP=1"
fi

# 16 codegen units: a much shorter build (this compiles the whole engine with coverage
# instrumentation and ASan) for slightly slower fuzzing.
build_flags=(-O --codegen-units 16)
echo "== building ${targets[*]}"
for target in "${targets[@]}"; do
    cargo "${toolchain[@]}" fuzz build "${build_flags[@]}" "$target"
done

logs="$fuzz_dir/target/logs"
mkdir -p "$logs"
# The targets' temp files (the sessions' workspace, fuzz/src/lib.rs): libFuzzer ends a run
# with exit(), so nothing of theirs is dropped; the script removes them instead.
scratch="$(mktemp -d -t hearth-fuzz-run.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
passed=0
failed=0
summary=()
for target in "${targets[@]}"; do
    work="$fuzz_dir/corpus-work/$target"
    artifacts="$fuzz_dir/artifacts/$target"
    mkdir -p "$work" "$artifacts"
    log="$logs/$target.log"
    [[ $replay -eq 0 ]] || log="$logs/$target.replay.log"
    # Per target: dictionary and input size. send_structured starts at its full length
    # (-len_control=0): a few bytes of `arbitrary` input only make one or two ops.
    case "$target" in
        send) extra=(-dict="$fuzz_dir/dict/send.dict" -max_len=4096) ;;
        send_structured) extra=(-dict="$fuzz_dir/dict/send.dict" -max_len=4096 -len_control=0) ;;
        sse) extra=(-dict="$fuzz_dir/dict/sse.dict" -max_len=16384) ;;
        *) extra=() ;;
    esac
    extra+=(-detect_leaks="$leaks")
    seeds=("$fuzz_dir/corpus/$target")
    [[ -d "$fuzz_dir/regressions/$target" ]] && seeds+=("$fuzz_dir/regressions/$target")
    if [[ $replay -eq 1 ]]; then
        mapfile -t inputs < <(find "${seeds[@]}" -type f | sort)
        echo "== $target: replaying ${#inputs[@]} saved inputs"
        args=(-detect_leaks="$leaks" "${inputs[@]}")
    else
        echo "== $target: fuzzing for ${seconds}s (log: $log)"
        # -timeout: one input may take at most 60 s (the harness itself reports a round
        # unanswered after 20 s); -rss_limit_mb: a leak shows as an OOM crash.
        args=("$work" "${seeds[@]}" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096
              -print_final_stats=1 "${extra[@]}" -artifact_prefix="$artifacts/")
    fi
    set +e
    if [[ $replay -eq 1 ]]; then
        # The binary itself: `cargo fuzz run` would append the corpus directory, and
        # libFuzzer runs a list of files once only when it holds no directory.
        triple="$(rustc -vV | sed -n 's/^host: //p')"
        TMPDIR="$scratch" "$fuzz_dir/target/$triple/release/$target" "${args[@]}" >"$log" 2>&1
    else
        TMPDIR="$scratch" cargo "${toolchain[@]}" fuzz run "${build_flags[@]}" "$target" -- "${args[@]}" >"$log" 2>&1
    fi
    status=$?
    set -e
    runs="$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | tail -1 || true)"
    [[ $replay -eq 1 ]] && runs="$(grep -c '^Executed' "$log" || true) inputs replayed"
    execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)"
    cov="$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 || true)"
    if [[ $status -eq 0 ]]; then
        passed=$((passed + 1))
        summary+=("ok    $target: ${runs:-$execs runs} ${cov:+($cov)}")
    else
        failed=$((failed + 1))
        summary+=("FAIL  $target: exit $status; see $log; reproducers in $artifacts/")
        # The cause first: a CI excerpt of this output may keep only its first lines, and
        # the end of the log is cargo-fuzz's backtrace of itself.
        echo "---- $target failed; what failed:" >&2
        grep -m 5 -A 6 -E "panicked at|^==[0-9]+==ERROR|^SUMMARY:|HANG:|deadly signal|out-of-memory|timeout after" "$log" | cut -c1-2000 >&2 || true
        echo "---- the end of its log:" >&2
        grep -v '^#[0-9]' "$log" | tail -n 40 >&2
    fi
done

echo "== fuzz summary"
printf '%s\n' "${summary[@]}"
echo "fuzz: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
