"""Where the suite finds the repo's binaries, the ACP schema and the fixtures.

Everything is located relative to this file so the suite runs from any cwd and in a fresh
clone.
"""

from __future__ import annotations

import os
from pathlib import Path

_HERE = Path(__file__).resolve().parent

#: tests/conformance/python/harness -> the repository root.
REPO_ROOT = _HERE.parents[3]

#: tests/conformance/fixtures: data shared with the TypeScript suite.
FIXTURES_DIR = _HERE.parents[1] / "fixtures"

#: The ACP v1 stable schema the frames must validate against: the vendored copy
#: (tests/acp/README.md), or ``HEARTH_ACP_SCHEMA`` to try another, as in the Rust tests.
SCHEMA_PATH = Path(os.environ.get("HEARTH_ACP_SCHEMA") or REPO_ROOT / "tests" / "acp" / "schema.json").resolve()

#: The ACP v1 schema with its unstable parts, for the answers to the unstable methods Hearth
#: serves (``UNSTABLE_METHODS`` in schema.py), or ``HEARTH_ACP_UNSTABLE_SCHEMA``, as in the Rust tests.
UNSTABLE_SCHEMA_PATH = Path(
    os.environ.get("HEARTH_ACP_UNSTABLE_SCHEMA") or REPO_ROOT / "tests" / "acp" / "schema.unstable.json"
).resolve()


def _target_dir() -> Path:
    """Cargo's target dir: ``CARGO_TARGET_DIR`` (relative to the repo root) or ``<repo>/target``."""
    from_env = os.environ.get("CARGO_TARGET_DIR")
    return REPO_ROOT / from_env if from_env else REPO_ROOT / "target"


def binary(name: str) -> Path:
    """Path of a debug binary built by cargo.

    The suite never builds: a missing binary is a setup error with the command that fixes it.
    """
    path = _target_dir() / "debug" / name
    if not path.exists():
        raise FileNotFoundError(
            f"{path} does not exist: build it first with "
            "`cargo build -p hearth-cli -p hearth-mock-llm` in the repository root"
        )
    return path


def hearth_command() -> list[str]:
    """The Hearth under test, as the words to spawn: ``HEARTH_BIN`` (default: the debug
    ``hearth`` above), started through ``HEARTH_BIN_WRAPPER`` when set -- words split on
    spaces, e.g. ``wine64`` or ``qemu-aarch64 -L /usr/aarch64-linux-gnu`` -- so a cross build
    runs against the host's mock LLM (tests/cross/)."""
    from_env = os.environ.get("HEARTH_BIN")
    file = Path(from_env).resolve() if from_env else binary("hearth")
    return [*os.environ.get("HEARTH_BIN_WRAPPER", "").split(), str(file)]


#: Whether the Hearth under test is a Windows build (``HEARTH_BIN`` ends in ``.exe``, run by
#: wine): it gets Windows paths, and the scenarios that need a POSIX shell are skipped.
WINDOWS_HEARTH = os.environ.get("HEARTH_BIN", "").lower().endswith(".exe")


def hearth_path(path: Path) -> str:
    """A host path as the Hearth under test names it. The one translation of the suite: wine
    maps the host's ``/`` to drive ``Z:``, so a Windows Hearth gets ``Z:\\tmp\\...``; any other
    Hearth the path as is."""
    return "Z:" + str(path).replace("/", "\\") if WINDOWS_HEARTH else str(path)


#: Why a command that does not exist cannot be reported as such by this Hearth, or None.
#: qemu-user runs glibc's posix_spawn (a clone sharing memory with the parent until exec) as a
#: plain fork, so the child's failed exec never reaches the parent: Hearth sees a spawn that
#: worked and a child exiting 127.
SPAWN_ERRORS_LOST = (
    "under qemu-user a failed exec is not reported to Hearth (posix_spawn runs as a plain fork): the child exits 127"
    if "qemu-" in os.environ.get("HEARTH_BIN_WRAPPER", "")
    else None
)


def wrapper_environment() -> dict[str, str] | None:
    """The environment to start a wrapped Hearth with, or None for the SDK's default. The SDK
    trims the environment to a few variables; the wrapper's own settings (``WINEPREFIX``,
    ``WINEDEBUG``, ``QEMU_*``) must reach it too, or wine would use another prefix."""
    if not os.environ.get("HEARTH_BIN_WRAPPER"):
        return None
    import acp  # here, not at the top: paths stays importable without the SDK

    own = {key: value for key, value in os.environ.items() if key.startswith(("WINE", "QEMU_"))}
    return {**acp.default_environment(), **own}
