#!/usr/bin/env bash
# CI entry point of the VS Code extension example: install the pinned packages (typescript,
# @types/vscode, the official SDK; hearth-acp is bindings/node itself), compile everything
# with tsc (extension.ts against @types/vscode included), run the node:test suite against the
# real engine. Expects the debug addon (bindings/node/run-tests.sh builds it) and the debug mock
# LLM (`cargo build -p hearth-mock-llm`).
set -euo pipefail
cd "$(dirname "$0")"

if ! compgen -G '../../bindings/node/hearth_node.*.node' >/dev/null; then
    echo "the debug Node addon is missing: run bindings/node/run-tests.sh (or npm run build there) first" >&2
    exit 1
fi
npm ci --no-audit --no-fund
npm run compile
# A test that leaks an open engine would keep its process alive; bound the run.
timeout 300 npm test
