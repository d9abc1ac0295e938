"""Adds an executable to a wheel's scripts, the way ruff and other Rust tools ship their
command: ``<name>-<version>.data/scripts/<file>``, which pip installs into the environment's
``bin`` (``Scripts`` on Windows) unchanged, so no Python launcher sits in front of it.

    python wheel-add-script.py WHEEL EXECUTABLE OUT_DIR

maturin can put such a directory into the wheel itself (``[tool.maturin] data``), but it then
requires that directory for every build, ``maturin develop`` included; adding the file here
keeps the release wheel build identical to the one the performance harness makes (see
scripts/lib/release-build.sh). The RECORD gets the file's hash and size, as the wheel spec
requires; everything else is copied byte for byte.
"""

from __future__ import annotations

import base64
import hashlib
import sys
import zipfile
from pathlib import Path


def record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def main() -> None:
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    wheel, executable, out_dir = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    # The distribution's name and version are the wheel file name's first two fields.
    name, version = wheel.name.split("-")[:2]
    script = f"{name}-{version}.data/scripts/{executable.name}"
    payload = executable.read_bytes()
    out = out_dir / wheel.name
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        record_name = next(n for n in source.namelist() if n.endswith(".dist-info/RECORD"))
        for item in source.infolist():
            if item.filename == record_name:
                continue
            target.writestr(item, source.read(item.filename))
        info = zipfile.ZipInfo(script, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = (0o100755 << 16)  # a regular file, executable: pip keeps the mode
        info.compress_type = zipfile.ZIP_DEFLATED
        target.writestr(info, payload)
        record = source.read(record_name).decode().rstrip("\n").split("\n")
        # RECORD lists itself last, without a hash; the script goes just before it.
        lines = [line for line in record if not line.startswith(record_name + ",")]
        lines.append(f"{script},{record_hash(payload)},{len(payload)}")
        lines.append(f"{record_name},,")
        target.writestr(source.getinfo(record_name), "\n".join(lines) + "\n")
    print(out)


if __name__ == "__main__":
    main()
