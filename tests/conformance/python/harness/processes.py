"""Processes on this machine, found by their command line (``pgrep -af``): how the tests see
whether a command's process tree is still alive."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable


def processes_matching(pattern: str) -> list[str]:
    """``"<pid> <command line>"`` of every process whose command line matches ``pattern`` (a regex)."""
    result = subprocess.run(["pgrep", "-af", pattern], capture_output=True, text=True, check=False)
    if result.returncode == 1:  # none matched
        return []
    if result.returncode != 0:
        raise RuntimeError(f"pgrep exited {result.returncode}: {result.stderr}")
    return [line for line in result.stdout.splitlines() if line]


async def poll_processes(pattern: str, done: Callable[[list[str]], bool], timeout: float) -> list[str]:
    """Polls until ``done(processes_matching(pattern))`` holds or ``timeout`` seconds pass;
    returns the last list either way, for the caller to assert on."""
    until = time.monotonic() + timeout
    while True:
        found = processes_matching(pattern)
        if done(found) or time.monotonic() >= until:
            return found
        await asyncio.sleep(0.05)
