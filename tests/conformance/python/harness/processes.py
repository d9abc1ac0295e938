"""Processes on this machine, found by their command line (``pgrep -af``) or by pid: how the
tests see whether a command's process tree (or an MCP server) is still alive."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


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


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie runs nothing: it counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return not stat[stat.rfind(")") + 2 :].startswith("Z")


def pids_in(file: Path) -> list[int]:
    """The pids an MCP test server appended to its ``MCP_TEST_PIDFILE`` (``server PID`` lines)."""
    if not file.exists():
        return []
    words = [line.split()[-1] for line in file.read_text().splitlines() if line.strip()]
    return [int(w) for w in words if w.isdigit()]


async def poll_gone(pids: list[int], timeout: float) -> list[int]:
    """Polls until none of ``pids`` runs or ``timeout`` seconds pass; returns those still running."""
    until = time.monotonic() + timeout
    while True:
        running = [pid for pid in pids if alive(pid)]
        if not running or time.monotonic() >= until:
            return running
        await asyncio.sleep(0.05)
