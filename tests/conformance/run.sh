#!/usr/bin/env bash
# Runs the ACP conformance suites (official TypeScript and Python SDK clients against
# `hearth acp`). Installs their pinned dependencies, and the MCP test servers
# (`tests/mcp/setup.sh`), when missing or changed; assumes the Rust binaries are built
# (`cargo build -p hearth-cli -p hearth-mock-llm`).
# Exits non-zero if either suite fails or runs no test.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-target}"
[[ "$target" = /* ]] || target="$repo/$target"

# With HEARTH_BIN (another build of Hearth, see README.md) only the host's mock LLM is needed here.
for bin in ${HEARTH_BIN:+hearth-mock-llm} ${HEARTH_BIN:-hearth hearth-mock-llm}; do
  [[ "$bin" == */* ]] && file="$bin" || file="$target/debug/$bin"
  if [[ ! -x "$file" ]]; then
    echo "conformance: $file is missing; run: cargo build -p hearth-cli -p hearth-mock-llm" >&2
    exit 1
  fi
done

# Reinstalls when the lock file differs from the one last installed (a copy kept inside the
# installed tree), so changing a pin takes effect without manual cleanup.
install_ts() {
  local stamp="$here/ts/node_modules/.conformance-lock.json"
  cmp -s "$here/ts/package-lock.json" "$stamp" && return 0
  (cd "$here/ts" && npm ci --no-audit --no-fund) && cp "$here/ts/package-lock.json" "$stamp"
}

install_python() {
  local venv="$here/python/.venv" stamp="$here/python/.venv/conformance-requirements.txt"
  cmp -s "$here/python/requirements.txt" "$stamp" && return 0
  rm -rf "$venv"
  python3 -m venv "$venv" &&
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/python/requirements.txt" &&
    cp "$here/python/requirements.txt" "$stamp"
}

status=0

# The MCP test servers of the mcp scenario: setup.sh installs what changed and prints their
# paths as MCP_TEST_*=… lines, exported here for both suites (run alone, a suite calls it).
if mcp_env="$(bash "$repo/tests/mcp/setup.sh")"; then
  while IFS='=' read -r key value; do
    [[ "$key" == MCP_TEST_* ]] && export "$key=$value"
  done <<<"$mcp_env"
else
  echo "conformance: tests/mcp/setup.sh failed; the mcp scenario cannot run" >&2
  status=1
fi

echo "== conformance: TypeScript (@agentclientprotocol/sdk) =="
if install_ts; then
  # One test file at a time: the machine is small and each file runs its own processes.
  # node exits 0 when it finds no test, so the summary's count is checked too.
  log="$(mktemp)"
  (cd "$here/ts" && node --test --test-concurrency=1 test/) | tee "$log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  grep -Eq '^# tests [1-9]' "$log" || { echo "conformance: the TypeScript suite ran no test" >&2; status=1; }
  rm -f "$log"
else
  echo "conformance: npm ci failed" >&2
  status=1
fi

echo "== conformance: Python (agent-client-protocol) =="
if install_python; then
  # Any non-zero pytest exit fails the run, including 5 (no tests collected).
  (cd "$here/python" && .venv/bin/python -m pytest) || status=1
else
  echo "conformance: installing python/requirements.txt failed" >&2
  status=1
fi

exit "$status"
