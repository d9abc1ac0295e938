#!/usr/bin/env bash
# Installs the real language servers the LSP tests start, pinned by package-lock.json, into
# node_modules/ (pyright, TypeScript 7), and rust-analyzer with rustup; safe to run again (it reinstalls only what changed).
# Then prints, one KEY=VALUE a line, the commands a test needs:
#   LSP_TEST_PYRIGHT  pyright-langserver (run it with --stdio)
#   LSP_TEST_TSC      TypeScript 7's tsc (run it with --lsp --stdio)
# Progress goes to stderr, so `eval "$(bash tests/lsp/setup.sh)"` works.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
stamp="$here/node_modules/.hearth-package-lock.json"

if ! cmp -s package-lock.json "$stamp"; then
  echo "lsp setup: npm ci in $here" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
  cp package-lock.json "$stamp"
fi

pyright="$here/node_modules/.bin/pyright-langserver"
tsc="$here/node_modules/.bin/tsc"
for program in "$pyright" "$tsc"; do
  [[ -x "$program" ]] || { echo "lsp setup: $program is missing" >&2; exit 1; }
done
"$tsc" --version >&2

# rust-analyzer, the Rust server Hearth starts by default: rustup's component, pinned with
# the toolchain (rustup's proxy in ~/.cargo/bin answers `--version` only once it is added).
if ! rust-analyzer --version >/dev/null 2>&1; then
  echo "lsp setup: rustup component add rust-analyzer" >&2
  rustup component add rust-analyzer >&2
fi
rust-analyzer --version >&2
# The standard library's source, which rust-analyzer loads as the sysroot of every workspace
# (without it `String` and `format!` are unknown to it); core/tests/lsp.rs's Rust test needs it.
sysroot=$(rustc --print sysroot)
if [ ! -d "$sysroot/lib/rustlib/src/rust/library" ]; then
  echo "lsp setup: rustup component add rust-src" >&2
  rustup component add rust-src >&2
fi

echo "LSP_TEST_PYRIGHT=$pyright"
echo "LSP_TEST_TSC=$tsc"
