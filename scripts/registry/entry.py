"""Builds and checks the registry entry (see scripts/registry.sh); prints it on stdout."""

import hashlib
import json
import re
import sys
import tarfile
import zipfile
from pathlib import Path

import jsonschema

PLATFORMS = {"linux-x86_64", "linux-aarch64", "darwin-x86_64", "darwin-aarch64",
             "windows-x86_64", "windows-aarch64"}


def fail(message):
    sys.exit(f"registry.sh: {message}")


def members(archive):
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            return z.namelist()
    with tarfile.open(archive) as t:
        return [m.name for m in t.getmembers() if m.isfile()]


def binary_inside(archive):
    """The path of the hearth binary in the archive, as the registry runs it after extraction."""
    found = [m for m in members(archive) if Path(m).name in ("hearth", "hearth.exe")]
    if len(found) != 1:
        fail(f"{archive.name}: expected one hearth binary inside, found {found}")
    return "./" + found[0].removeprefix("./")


def checked_sha256(archive):
    sidecar = archive.with_name(archive.name + ".sha256")
    if not sidecar.exists():
        fail(f"{archive.name}: no {sidecar.name}")
    words = sidecar.read_text().split()
    actual = hashlib.sha256(archive.read_bytes()).hexdigest()
    if not words or words[0].lower() != actual:
        fail(f"{archive.name}: sha256 {actual} does not match {sidecar.name}")
    return actual


def main(archives, version, base_url, schema_path):
    schema = json.loads(Path(schema_path).read_text())
    # The vendored schema's binaryTarget forbids unknown keys and (at its commit) has no
    # sha256: the digest is still checked, and written once the schema takes it.
    with_sha = "sha256" in schema["definitions"]["binaryTarget"]["properties"]
    pattern = re.compile(rf"^hearth-{re.escape(version)}-(.+)\.(tar\.gz|zip)$")
    binary = {}
    for archive in sorted(Path(archives).glob("hearth-*")):
        match = pattern.match(archive.name)
        if not match:
            continue
        platform = match.group(1)
        if platform not in PLATFORMS:
            fail(f"{archive.name}: {platform} is not a registry platform")
        target = {
            "archive": f"{base_url}/{archive.name}",
            "cmd": binary_inside(archive),
            "args": ["acp"],
        }
        digest = checked_sha256(archive)
        if with_sha:
            target["sha256"] = digest
        binary[platform] = target
    if not binary:
        fail(f"no hearth-{version}-<platform> archives in {archives}")
    entry = {
        "id": "hearth",
        "name": "Hearth",
        "version": version,
        "description": "A fast, embeddable ACP coding agent engine in Rust",
        "repository": "https://github.com/hearth-acp/hearth",
        "license": "Apache-2.0",
        "distribution": {
            "binary": binary,
            "npx": {"package": f"hearth-acp@{version}", "args": ["acp"]},
        },
    }
    try:
        jsonschema.validate(entry, schema, format_checker=jsonschema.FormatChecker())
    except jsonschema.ValidationError as e:
        fail(f"the entry does not match {schema_path}: {e.message}")
    print(json.dumps(entry, indent=2))


if __name__ == "__main__":
    main(*sys.argv[1:])
