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
mvn=(mvn -B --no-transfer-progress -Dstyle.color=never)

# The example, as its README runs it, so it can't rot: install the binding, ask the mock.
"${mvn[@]}" -q -f bindings/jvm/pom.xml install -DskipTests
script="$(mktemp)"
trap 'rm -f "$script"' EXIT
echo '{"responses":[{"events":[{"text":"Hello"},{"text":" world"}]}]}' > "$script"
# The mock serves until its stdin closes: the coprocess pipe, closed when this script exits.
coproc MOCK { "$native_dir/hearth-mock-llm" --script "$script"; }
read -r mock_url <&"${MOCK[0]}"
answer="$(OPENAI_BASE_URL="$mock_url" OPENAI_API_KEY=test timeout 300 \
    "${mvn[@]}" -q -f examples/jvm/pom.xml compile exec:java -Dhearth.library.path="$native_dir" \
    -Dexec.args="Say hello" 2>&1)"
if [[ "$answer" != *"Hello world"* ]]; then
    echo "examples/jvm did not print the mock's answer:" >&2
    echo "$answer" >&2
    exit 1
fi
echo "examples/jvm: ok"

# Not -q: Surefire's "Tests run: N, Failures: …" summary is logged at INFO.
"${mvn[@]}" -f bindings/jvm/pom.xml test -Dhearth.native.dir="$native_dir"
