"""The MCP test servers (tests/mcp): where their Python and ``server.py`` are. run.sh runs
``tests/mcp/setup.sh`` and exports its ``MCP_TEST_*`` lines; run alone, the suite runs the
script itself (it installs only what changed, and prints the paths one ``KEY=VALUE`` a line)."""

from __future__ import annotations

import functools
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .paths import REPO_ROOT

_SETUP = REPO_ROOT / "tests" / "mcp" / "setup.sh"
#: A first install (venv + npm ci) takes a while; an unchanged one about 2 s.
_SETUP_TIMEOUT_S = 300


@dataclass(frozen=True)
class McpTestServers:
    #: The interpreter of tests/mcp/.venv (it has the official ``mcp`` SDK).
    python: str
    #: tests/mcp/server.py
    server: str


@functools.cache
def mcp_test_servers() -> McpTestServers:
    variables: dict[str, str] = dict(os.environ)
    if not variables.get("MCP_TEST_PYTHON") or not variables.get("MCP_TEST_SERVER"):
        run = subprocess.run(
            ["bash", str(_SETUP)], capture_output=True, text=True, timeout=_SETUP_TIMEOUT_S, check=False
        )
        if run.returncode != 0:
            raise RuntimeError(f"bash {_SETUP} failed (exit {run.returncode}):\n{run.stderr}")
        variables = dict(re.findall(r"^(MCP_TEST_\w+)=(.*)$", run.stdout, re.MULTILINE))
    found = McpTestServers(python=variables.get("MCP_TEST_PYTHON", ""), server=variables.get("MCP_TEST_SERVER", ""))
    for what, file in vars(found).items():
        if not file or not Path(file).exists():
            raise FileNotFoundError(f"MCP test {what} not found ({file!r}): run `bash {_SETUP}`")
    return found
