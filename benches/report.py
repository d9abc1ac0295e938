"""What every harness's summary says about the run besides its numbers: the machine, the
commit measured and the toolchains; and the rows benches/compare.sh adds for another build.
Imported by benches/*/summarize.py.

Standard library only, so it runs on the system python3.
"""

import datetime
import os
import platform
import subprocess
from pathlib import Path

BENCHES = Path(__file__).resolve().parent


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def commit() -> str:
    """The commit measured, marked dirty when the engine's sources differ from it (the
    harness measures the working tree, which other work may be changing)."""

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(BENCHES), *args], capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    changed = git(
        "status", "--porcelain", "--", "../core", "../ffi", "../cli", "../bindings/node", "../bindings/python", "../Cargo.lock"
    )
    return f"{head} (with uncommitted changes to the engine or bindings)" if changed else head


def version(*command: str) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True).stdout.strip() or "?"
    except OSError:
        return "?"


def toolchains() -> str:
    python = version(str(BENCHES / ".venv/bin/python"), "--version")
    return f"{version('rustc', '--version')}; Node {version('node', '--version')}; {python}"


def machine() -> str:
    cpus = len(os.sched_getaffinity(0))
    return f"{cpus} CPUs (nproc), {cpu_model()}, Linux {platform.release()}; shared with other work, so expect noise"


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


# The rows of the build benches/compare.sh compares with: `HOST@base`, after HOST's own.
BASE = "@base"


def with_base(rows: dict[str, tuple], compared: tuple[str, ...], base_rev: str | None) -> dict[str, tuple]:
    """`rows` (key → (label, …)) with, after each key in `compared`, the same row for
    BASE_REV's build (none without one)."""
    out: dict[str, tuple] = {}
    for key, (label, *rest) in rows.items():
        out[key] = (label, *rest)
        if base_rev and key in compared:
            out[key + BASE] = (f"{label} — at {base_rev}", *rest)
    return out


def same_build(key: str, other: str) -> str:
    """The key of row `other` of the build `key` measures (to compare a row with a reference
    of its own build)."""
    return other + BASE if key.endswith(BASE) else other
