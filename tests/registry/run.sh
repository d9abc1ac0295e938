#!/usr/bin/env bash
# The registry stage: scripts/registry.sh on fake archives, then the registry's spawn check
# against the debug build (and against a command that prints a non-JSON line, which must fail).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
hearth="${CARGO_TARGET_DIR:-$root/target}/debug/hearth"
bash "$root/tests/registry/registry.sh"
passed=0 failed=0
if python3 "$root/tests/registry/spawn-check.py" --cmd "$hearth acp"; then
  passed=$((passed+1)); else echo "FAIL: spawn check of $hearth" >&2; failed=$((failed+1)); fi
if python3 "$root/tests/registry/spawn-check.py" --cmd "sh -c 'echo banner; exec $hearth acp'" 2>/dev/null; then
  echo "FAIL: a non-JSON line passed the spawn check" >&2; failed=$((failed+1)); else passed=$((passed+1)); fi
echo "spawn check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
