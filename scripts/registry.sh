#!/usr/bin/env bash
# Writes the ACP registry entry dist/registry/hearth/agent.json (+ icon.svg) from the release
# archives in dist/archives (hearth-<version>-<platform>.tar.gz|.zip, each with <archive>.sha256),
# then validates it against the vendored schema (tests/registry/agent.schema.json) and checks
# every sha256 against its archive. Fails loudly on any mismatch.
#   scripts/registry.sh [--base-url URL]   (default: the GitHub release of v<version>)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)"
base_url="https://github.com/hearth-acp/hearth/releases/download/v$version"
while [ $# -gt 0 ]; do
  case "$1" in
    --base-url) base_url="${2:?--base-url needs a URL}"; shift 2 ;;
    *) echo "registry.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
archives="${HEARTH_DIST:-$root/dist}/archives"
out="${HEARTH_DIST:-$root/dist}/registry/hearth"
# The validator, pinned; installed by the script itself so a fresh CI clone has it.
python3 -c 'import jsonschema' 2>/dev/null \
  || python3 -m pip install --quiet --break-system-packages 'jsonschema==4.26.0' >&2
mkdir -p "$out"
cp "$root/scripts/registry/icon.svg" "$out/icon.svg"
python3 "$root/scripts/registry/entry.py" "$archives" "$version" "${base_url%/}" \
  "$root/tests/registry/agent.schema.json" > "$out/agent.json.new"
mv "$out/agent.json.new" "$out/agent.json"
echo "registry.sh: wrote $out/agent.json" >&2
