#!/usr/bin/env bash
# Builds the JNI library, runs the JVM example against the mock LLM, then the binding's JUnit
# tests (Maven Surefire). Expects `cargo build -p hearth-mock-llm` to have been run.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

cargo build -p hearth-jvm

# Cargo resolves a relative CARGO_TARGET_DIR against the directory it runs in (the repo root);
# Maven needs it absolute.
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in
    /*) ;;
    *) target_dir="$root/$target_dir" ;;
esac
native_dir="$target_dir/debug"
if [[ ! -x "$native_dir/hearth-mock-llm" ]]; then
    echo "$native_dir/hearth-mock-llm is missing: run \`cargo build -p hearth-mock-llm\` first" >&2
    exit 1
fi
maven=(mvn -B --no-transfer-progress -Dstyle.color=never)
# Debian's Maven 3.8 writes ANSI reset codes even in batch mode; strip them so the log (and
# Surefire's closing summary) stays plain text. pipefail keeps Maven's exit status.
plain() { sed -u 's/\x1b\[[0-9;]*m//g'; }

# The example, as its README runs it, so it can't rot: install the binding, ask the mock.
"${maven[@]}" -q -f bindings/jvm/pom.xml install -DskipTests 2>&1 | plain
script="$(mktemp)"
trap 'rm -f "$script"' EXIT
echo '{"responses":[{"events":[{"text":"Hello"},{"text":" world"}]}]}' > "$script"
# The mock serves until its stdin closes: the coprocess pipe, closed when this script exits.
coproc MOCK { "$native_dir/hearth-mock-llm" --script "$script"; }
read -r mock_url <&"${MOCK[0]}"
if ! answer="$(OPENAI_BASE_URL="$mock_url" OPENAI_API_KEY=test timeout 300 \
        "${maven[@]}" -q -f examples/jvm/pom.xml compile exec:java -Dhearth.library.path="$native_dir" \
        -Dexec.args="Say hello" 2>&1 | plain)" || [[ "$answer" != *"Hello world"* ]]; then
    echo "examples/jvm did not print the mock's answer:" >&2
    echo "$answer" >&2
    exit 1
fi
echo "examples/jvm: ok"

# Not -q: Surefire's "Tests run: N, Failures: …" summary is logged at INFO.
"${maven[@]}" -f bindings/jvm/pom.xml test -Dhearth.native.dir="$native_dir" 2>&1 | plain
