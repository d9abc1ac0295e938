#!/usr/bin/env bash
# Installs what the MCP tests need, pinned, into this folder; safe to run again (it reinstalls
# only what changed):
#   .venv/         python -m venv + pip install -r requirements.txt (the official `mcp` SDK)
#   node_modules/  npm ci from package-lock.json (@modelcontextprotocol/server-everything)
# Then prints, one KEY=VALUE a line, the paths a test needs:
#   MCP_TEST_PYTHON      the venv's python, to run server.py
#   MCP_TEST_SERVER      server.py
#   MCP_TEST_EVERYTHING  server-everything's entry point (run it as: node FILE stdio)
# Progress goes to stderr, so `eval "$(bash tests/mcp/setup.sh)"` works.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

python="${PYTHON:-python3}"
venv="$here/.venv"
py_stamp="$venv/hearth-requirements.txt"
node_stamp="$here/node_modules/.hearth-package-lock.json"

# Reinstall when requirements.txt differs from the copy kept inside the installed venv.
if ! cmp -s requirements.txt "$py_stamp"; then
  echo "mcp setup: creating $venv" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r requirements.txt >&2
  cp requirements.txt "$py_stamp"
fi

# Likewise for package-lock.json; `npm ci` installs exactly the lock file's versions.
if ! cmp -s package-lock.json "$node_stamp"; then
  echo "mcp setup: npm ci in $here" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
  cp package-lock.json "$node_stamp"
fi

everything="$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
[[ -f "$everything" ]] || { echo "mcp setup: $everything is missing" >&2; exit 1; }
"$venv/bin/python" -c "import mcp.server.mcpserver" ||
  { echo "mcp setup: the venv cannot import mcp" >&2; exit 1; }

echo "MCP_TEST_PYTHON=$venv/bin/python"
echo "MCP_TEST_SERVER=$here/server.py"
echo "MCP_TEST_EVERYTHING=$everything"
