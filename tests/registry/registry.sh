#!/usr/bin/env bash
# Tests scripts/registry.sh on fake archives made here: a good run writes an entry that names
# every archive, its binary and the npx package; a wrong sha256 and a foreign platform fail.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
export HEARTH_DIST="$work/dist"
mkdir -p "$HEARTH_DIST/archives" "$work/stage/hearth-$version-linux-x86_64" "$work/stage/win"
cd "$work/stage"
echo fake > "hearth-$version-linux-x86_64/hearth"
echo fake > win/hearth.exe
tar -czf "$HEARTH_DIST/archives/hearth-$version-linux-x86_64.tar.gz" "hearth-$version-linux-x86_64"
(cd win && python3 -m zipfile -c "$HEARTH_DIST/archives/hearth-$version-windows-x86_64.zip" hearth.exe)
cd "$HEARTH_DIST/archives"
for a in *.tar.gz *.zip; do sha256sum "$a" > "$a.sha256"; done
passed=0 failed=0
check() { if "$@"; then passed=$((passed+1)); else echo "FAIL: $*" >&2; failed=$((failed+1)); fi; }
"$root/scripts/registry.sh" --base-url https://example.invalid/r
entry="$HEARTH_DIST/registry/hearth/agent.json"
expect() { python3 -c "import json,sys; e=json.load(open('$entry')); sys.exit(0 if ($1) else 1)"; }
check expect "e['version'] == '$version' and e['distribution']['npx'] == {'package': 'hearth-acp@$version', 'args': ['acp']}"
check expect "e['distribution']['binary']['linux-x86_64']['cmd'] == './hearth-$version-linux-x86_64/hearth'"
check expect "e['distribution']['binary']['windows-x86_64'] == {'archive': 'https://example.invalid/r/hearth-$version-windows-x86_64.zip', 'cmd': './hearth.exe', 'args': ['acp']}"
check expect "sorted(e['distribution']['binary']) == ['linux-x86_64', 'windows-x86_64']"
check grep -q currentColor "$HEARTH_DIST/registry/hearth/icon.svg"
check grep -q 'width="16" height="16"' "$HEARTH_DIST/registry/hearth/icon.svg"
# A digest that does not match its archive fails, naming it.
echo "0000  hearth-$version-linux-x86_64.tar.gz" > "hearth-$version-linux-x86_64.tar.gz.sha256"
check bash -c "! '$root/scripts/registry.sh' 2>'$work/err' && grep -q 'linux-x86_64.tar.gz: sha256' '$work/err'"
sha256sum "hearth-$version-linux-x86_64.tar.gz" > "hearth-$version-linux-x86_64.tar.gz.sha256"
# An archive for a platform the registry does not know fails.
cp "hearth-$version-linux-x86_64.tar.gz" "hearth-$version-plan9-mips.tar.gz"
check bash -c "! '$root/scripts/registry.sh' 2>'$work/err' && grep -q 'not a registry platform' '$work/err'"
echo "registry: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
