#!/usr/bin/env bash
# FFI misuse under memory checkers (reliability suite, item 4): builds tests/c/test_misuse.c
# (and reuses tests/c/test_hearth.c) and runs them
#
#   plain     against libhearth.so;
#   valgrind  test_misuse against libhearth.so: no invalid access, nothing definitely lost;
#   asan      AddressSanitizer + LeakSanitizer: the C programs built with -fsanitize=address
#             and linked with the normal libhearth.a. The C side is instrumented; the Rust
#             side is not, but ASan's interceptors still check every malloc/free/memcpy/
#             strlen the library makes, so a read past a frame's `len`, a write into a freed
#             or too-small host buffer, a double free and any leak (C or Rust heap) are
#             caught. Loads and stores the Rust code makes itself are not checked (that is
#             what valgrind and the asan-rust run add).
#   asan-rust the same programs linked with a libhearth.a whose Rust code (hearth-ffi,
#             hearth-core and every dependency, std excepted: -Zbuild-std needs the rust-src
#             component, which this machine can't download) is compiled with
#             -Zsanitizer=address on nightly. Built into target/asan-ffi on first use
#             (several minutes); skipped with a note when no nightly toolchain exists.
#
# Usage: tests/c/misuse.sh [plain] [valgrind] [asan] [asan-rust]   (default: all four)
# Needs: cargo build -p hearth-ffi -p hearth-mock-llm (as tests/c/run.sh does).
# Ends with "misuse: N passed, N failed" summing every run's checks.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
lib_dir="${CARGO_TARGET_DIR:-$root/target}/debug"
out="$lib_dir/c-tests"
mock="$lib_dir/hearth-mock-llm"
cc="${CC:-cc}"
cflags=(-std=c11 -g -Wall -Wextra -Werror -I "$root/include")
asan_flags=(-fsanitize=address -fno-omit-frame-pointer)
modes=("$@")
[[ ${#modes[@]} -gt 0 ]] || modes=(plain valgrind asan asan-rust)

for file in "$lib_dir/libhearth.so" "$lib_dir/libhearth.a" "$mock"; do
    [[ -e "$file" ]] || { echo "missing $file: run cargo build -p hearth-ffi -p hearth-mock-llm" >&2; exit 2; }
done
mkdir -p "$out"

total_passed=0
total_failed=0
# Runs a test program, shows its output, adds its "N passed, N failed" to the totals; a run
# that ends without that line (a sanitizer abort, a crash) counts as one failure.
run() {
    local name="$1"
    shift
    local log="$out/$name.log"
    echo "== $name"
    set +e
    "$@" >"$log" 2>&1
    local status=$?
    set -e
    cat "$log"
    local line
    line="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1 || true)"
    if [[ -n "$line" ]]; then
        total_passed=$((total_passed + ${line%% passed*}))
        local f="${line#*passed, }"
        total_failed=$((total_failed + ${f%% failed}))
    fi
    if [[ $status -ne 0 && ( -z "$line" || "$line" == *" 0 failed" ) ]]; then
        total_failed=$((total_failed + 1))
        echo "$name: exit status $status" >&2
    fi
}

asan_env=(
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1"
    LSAN_OPTIONS="report_objects=1"
)

# A sanitizer's clean run proves something only where the sanitizer works: runs the
# deliberately faulty `program` and counts a failure unless its report contains `pattern`.
self_check() {
    local program="$1" pattern="$2" proves="$3" unproven="$4"
    # (The output is captured first: the program fails by design, which pipefail would see.)
    local report
    report="$(env "${asan_env[@]}" "$program" 2>&1 || true)"
    if grep -q "$pattern" <<<"$report"; then
        echo "self-check: $proves"
    else
        echo "self-check FAILED: $unproven" >&2
        total_failed=$((total_failed + 1))
    fi
}

# LeakSanitizer needs ptrace-like access to the process; on a machine that refuses it, a
# "clean" run would prove nothing, so prove first that a leak is reported.
lsan_self_check() {
    printf '#include <stdlib.h>\nint main(void){void *p = malloc(77); p = 0; return p != 0;}\n' >"$out/leak.c"
    "$cc" "${asan_flags[@]}" -g "$out/leak.c" -o "$out/leak"
    self_check "$out/leak" 'Direct leak of 77 byte' \
        "LeakSanitizer reports a deliberate 77-byte leak" "leaks would go unreported here"
}

# Runs test_misuse (and test_hearth, which needs the mock) linked with the static library
# `lib` under ASan; `tag` names the build.
asan_runs() {
    local tag="$1" lib="$2"
    shift 2
    "$cc" "${cflags[@]}" "${asan_flags[@]}" "$root/tests/c/test_misuse.c" "$lib" "$@" -lpthread -ldl -lm \
        -o "$out/test_misuse_$tag"
    "$cc" "${cflags[@]}" "${asan_flags[@]}" "$root/tests/c/test_hearth.c" "$lib" "$@" -lpthread -ldl -lm \
        -o "$out/test_hearth_$tag"
    run "test_misuse, $tag" env "${asan_env[@]}" "$out/test_misuse_$tag"
    run "test_hearth, $tag" env "${asan_env[@]}" "$out/test_hearth_$tag" "$mock"
}

for mode in "${modes[@]}"; do
    case "$mode" in
        plain)
            "$cc" "${cflags[@]}" "$root/tests/c/test_misuse.c" -L "$lib_dir" -Wl,-rpath,"$lib_dir" -lhearth -lpthread \
                -o "$out/test_misuse_shared"
            run "test_misuse, shared library" "$out/test_misuse_shared"
            ;;
        valgrind)
            "$cc" "${cflags[@]}" "$root/tests/c/test_misuse.c" -L "$lib_dir" -Wl,-rpath,"$lib_dir" -lhearth -lpthread \
                -o "$out/test_misuse_shared"
            # As in run.sh: only definite leaks count (std keeps the main thread's handle).
            run "test_misuse, shared library under valgrind" valgrind --error-exitcode=1 --leak-check=full \
                --errors-for-leak-kinds=definite --show-leak-kinds=definite "$out/test_misuse_shared"
            ;;
        asan)
            lsan_self_check
            asan_runs "asan-c" "$lib_dir/libhearth.a"
            ;;
        asan-rust)
            if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
                echo "== asan-rust: skipped, no nightly toolchain (-Zsanitizer=address is nightly-only)"
                continue
            fi
            # Rust code instrumented by rustc (LLVM) runs on gcc's libasan here; prove that
            # the pairing reports a heap overflow in Rust code before trusting a clean run.
            printf '#[unsafe(no_mangle)]\npub extern "C" fn oob(i: usize) -> u8 { let v = vec![1u8; 8]; unsafe { *v.as_ptr().add(i) } }\n' \
                >"$out/oob.rs"
            printf '#include <stddef.h>\nunsigned char oob(size_t);\nint main(void) { return oob(8); }\n' >"$out/oob_main.c"
            rustc +nightly --edition 2024 -Zsanitizer=address -Cpanic=abort --crate-type staticlib \
                "$out/oob.rs" -o "$out/liboob.a"
            "$cc" "${asan_flags[@]}" "$out/oob_main.c" "$out/liboob.a" -lpthread -ldl -lm -o "$out/oob_main"
            self_check "$out/oob_main" 'heap-buffer-overflow' \
                "ASan reports a heap overflow in -Zsanitizer=address Rust code" \
                "Rust-side memory errors would go unreported"
            asan_dir="$root/target/asan-ffi"
            triple="$(rustc -vV | sed -n 's/^host: //p')"
            echo "== asan-rust: building hearth-ffi with -Zsanitizer=address into $asan_dir"
            # --target keeps build scripts and proc macros uninstrumented.
            RUSTFLAGS="-Zsanitizer=address -Cforce-frame-pointers=yes" \
                cargo +nightly build --locked -p hearth-ffi --target "$triple" --target-dir "$asan_dir" \
                --manifest-path "$root/Cargo.toml"
            asan_runs "asan-rust" "$asan_dir/$triple/debug/libhearth.a"
            ;;
        *) echo "unknown mode: $mode" >&2; exit 2 ;;
    esac
done

echo "misuse: $total_passed passed, $total_failed failed"
[[ $total_failed -eq 0 ]]
