#!/usr/bin/env bash
# Builds the Python binding (debug) into bindings/python/.venv and runs its pytest suite.
# Expects the mock LLM to be built already: `cargo build -p hearth-mock-llm`.
# PYTHON picks the interpreter that creates the venv (default: python3, which must be >= 3.10).
set -euo pipefail
cd "$(dirname "$0")"

if [ ! -x .venv/bin/python ]; then
    "${PYTHON:-python3}" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt

# maturin develop installs into the active venv; "activate" it for this one command.
VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" .venv/bin/maturin develop --locked

status=0
.venv/bin/python -m pytest "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "run-tests.sh: pytest collected no tests; that is a failure here" >&2
    exit 1
fi
exit "$status"
