#!/usr/bin/env bash
# Builds tests/c/test_hearth.c against include/hearth.h and libhearth, shared and static, runs
# both, and runs the shared build again under valgrind (no invalid access, nothing definitely
# lost). Before that, builds examples/c/hello.c and checks what it prints against the mock.
# Build the Rust side first:
#   cargo build -p hearth-ffi -p hearth-mock-llm
# valgrind: /usr/bin/valgrind here; on a machine without it, `apt-get install -y valgrind`.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
lib_dir="${CARGO_TARGET_DIR:-$root/target}/debug"
out="$lib_dir/c-tests"
mock="$lib_dir/hearth-mock-llm"
cc="${CC:-cc}"
cflags=(-std=c11 -g -Wall -Wextra -Werror -I "$root/include")

for file in "$lib_dir/libhearth.so" "$lib_dir/libhearth.a" "$mock"; do
    [[ -e "$file" ]] || { echo "missing $file: run cargo build -p hearth-ffi -p hearth-mock-llm" >&2; exit 2; }
done
mkdir -p "$out"

"$cc" "${cflags[@]}" "$root/tests/c/test_hearth.c" -L "$lib_dir" -Wl,-rpath,"$lib_dir" -lhearth -lpthread \
    -o "$out/test_hearth_shared"
"$cc" "${cflags[@]}" "$root/tests/c/test_hearth.c" "$lib_dir/libhearth.a" -lpthread -ldl -lm \
    -o "$out/test_hearth_static"

echo "== examples/c/hello.c against the mock LLM"
"$cc" "${cflags[@]}" "$root/examples/c/hello.c" -L "$lib_dir" -Wl,-rpath,"$lib_dir" -lhearth -lpthread -o "$out/hello"
script="$(mktemp)"
trap 'rm -f "$script"' EXIT
echo '{"responses":[{"events":[{"text":"Hello"},{"text":" world"}]}]}' >"$script"
coproc MOCK { "$mock" --script "$script"; }
mock_pid=$MOCK_PID
read -r url <&"${MOCK[0]}"
answer="$("$out/hello" "{\"dataDir\":\":memory:\",\"providers\":{\"openai\":{\"baseUrl\":\"$url\",\"apiKey\":\"test\"}}}" "Say hello")"
mock_stdin=${MOCK[1]}
exec {mock_stdin}>&- # the mock serves until its stdin closes
wait "$mock_pid"
if [[ "$answer" != "Hello world" ]]; then
    echo "hello.c printed '$answer', expected 'Hello world'" >&2
    exit 1
fi
echo "hello.c printed: $answer"

echo "== shared library ($lib_dir/libhearth.so)"
"$out/test_hearth_shared" "$mock"
echo "== static library ($lib_dir/libhearth.a)"
"$out/test_hearth_static" "$mock"
echo "== shared library under valgrind"
# Only definite leaks count (and are shown): std keeps the main thread's handle for the life
# of the process, which valgrind calls "possibly lost".
valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
    "$out/test_hearth_shared" "$mock"

# ---- FFI misuse (reliability suite, issue 5 item 4) ---------------------------------------
# tests/c/test_misuse.c: NULLs, invalid UTF-8, 10 MB frames, re-entrant and cross-engine
# sends, free from on_frame, sends during free, concurrent senders, many engines. Run plain,
# under valgrind, and under ASan + LeakSanitizer (C instrumented, linked with libhearth.a;
# test_hearth.c too). tests/c/misuse.sh asan-rust adds a libhearth built with
# -Zsanitizer=address (nightly, several minutes to build); scripts/reliability-ci.sh runs it.
echo "== FFI misuse"
"$root/tests/c/misuse.sh" plain valgrind asan
