#!/usr/bin/env python3
"""Writes the macOS framework link stubs (Security, CoreFoundation) this directory holds.

zig links Mach-O but ships no Apple frameworks; a text stub (.tbd, TAPI v4) gives the linker
what it needs: the install name and the symbols the framework exports. Each stub lists every
function and static the framework's -sys crate declares (security-framework-sys,
core-foundation-sys), read from their sources in cargo's registry: the framework's interface as
Hearth's dependencies know it. Only what the objects reference ends up bound in the binary.

Regenerate after a dependency update (a new symbol fails the macOS link with "undefined
symbol"): `python3 scripts/lib/macos-stubs/generate.py` from the repo root.
"""
import json
import pathlib
import re
import subprocess

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
TARGETS = {"x86_64-apple-darwin": "x86_64-macos", "aarch64-apple-darwin": "arm64-macos"}
# The -sys crate that declares each framework's functions and statics.
FRAMEWORKS = {"Security": "security-framework-sys", "CoreFoundation": "core-foundation-sys"}
# Functions and statics, and the statics its macros declare (`Name => kSecKeyAlgorithmName`).
DECLARED = re.compile(r"\bpub (?:fn|static(?: mut)?) ([A-Za-z_][A-Za-z0-9_]*)|=>\s*(k[A-Z][A-Za-z0-9_]*)\b")


def crate_dirs():
    metadata = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked",
         "--filter-platform", "aarch64-apple-darwin"],
        cwd=REPO, check=True, capture_output=True, text=True).stdout)
    return {p["name"]: pathlib.Path(p["manifest_path"]).parent for p in metadata["packages"]}


def declared(crate_dir):
    names = set()
    for source in crate_dir.joinpath("src").rglob("*.rs"):
        names.update(a or b for a, b in DECLARED.findall(source.read_text()))
    return {"_" + n for n in names}


def stub(framework, symbols, targets):
    listed = ", ".join(sorted(symbols))
    return f"""--- !tapi-tbd
tbd-version:     4
targets:         [ {', '.join(targets)} ]
install-name:    '/System/Library/Frameworks/{framework}.framework/Versions/A/{framework}'
current-version: 1
compatibility-version: 1
exports:
  - targets:         [ {', '.join(targets)} ]
    symbols:         [ {listed} ]
...
"""


def main():
    dirs = crate_dirs()
    for framework, crate in FRAMEWORKS.items():
        # Every symbol the -sys crate declares, not only those the deps' objects reference:
        # some are referenced only from code generated in the final link (generics), which no
        # object under deps/ shows; a stub entry nothing references costs nothing.
        symbols = declared(dirs[crate])
        path = HERE / f"{framework}.framework" / f"{framework}.tbd"
        path.parent.mkdir(exist_ok=True)
        path.write_text(stub(framework, symbols, list(TARGETS.values())))
        print(f"{path.relative_to(REPO)}: {len(symbols)} symbols")


if __name__ == "__main__":
    main()
