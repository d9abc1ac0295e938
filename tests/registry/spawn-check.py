#!/usr/bin/env python3
"""The ACP registry's auth check, reproduced (its `.github/workflows/client.py`, see README.md):
spawn the agent with an empty temporary HOME, an allowlisted environment and TERM=dumb, send
`initialize` with the registry client's capabilities, and require, within the bound, an answer
whose `authMethods` is non-empty and typed `agent` or `terminal` (type, else the `_meta` key,
else `agent`), with not one non-JSON line on stdout.

    spawn-check.py --cmd "/path/hearth acp"   |   --cmd "wine64 /path/hearth.exe acp"
"""

import argparse
import json
import os
import select
import shlex
import subprocess
import sys
import tempfile
import time

# 120 s: the handshake bound acp-peers-2.md gives for the registry's check (client.py's own
# default is 60 s); an agent that needs more is not listable.
TIMEOUT = 120.0
# What a sandboxed client passes on; wine needs its prefix and the Windows system root.
ALLOWED = ("PATH", "LANG", "LC_ALL", "WINEPREFIX", "WINEDEBUG", "SYSTEMROOT", "TMPDIR")
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
        "_meta": {"terminal_output": True, "terminal-auth": True},
    },
    "clientInfo": {"name": "registry-auth-check", "version": "1.0.0"},
}}


def method_type(method):
    meta = method.get("_meta") or {}
    if method.get("type"):
        return method["type"]
    if "terminal-auth" in meta:
        return "terminal"
    return "agent"


def read_answer(proc, deadline):
    """Lines until the answer to id 1; any non-JSON line is a failure."""
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([proc.stdout], [], [], max(left, 0))
        if not ready:
            raise SystemExit(f"spawn-check: no initialize answer within {TIMEOUT:.0f} s")
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("spawn-check: stdout closed before the initialize answer")
        try:
            frame = json.loads(line)
        except json.JSONDecodeError:
            raise SystemExit(f"spawn-check: a non-JSON line on stdout: {line[:200]!r}")
        if frame.get("id") == 1:
            return frame


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cmd", required=True, help="the agent's command line")
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="acp-auth-check-")
    env = {k: os.environ[k] for k in ALLOWED if k in os.environ}
    env.update(HOME=home, TERM="dumb")
    started = time.monotonic()
    argv = shlex.split(args.cmd)
    # The agent runs in the empty HOME: a path relative to the caller must still find it.
    argv = [os.path.abspath(a) if os.path.exists(a) else a for a in argv]
    proc = subprocess.Popen(argv, cwd=home, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write(json.dumps(INITIALIZE) + "\n")
        proc.stdin.flush()
        answer = read_answer(proc, started + TIMEOUT)
        took = time.monotonic() - started
        if "error" in answer:
            raise SystemExit(f"spawn-check: initialize failed: {answer['error']}")
        methods = answer["result"].get("authMethods") or []
        types = [method_type(m) for m in methods]
        if not methods or not any(t in ("agent", "terminal") for t in types):
            raise SystemExit(f"spawn-check: no usable authMethods: {types}")
        # Hang up (communicate closes stdin): whatever else the agent prints on its way out must be JSON too.
        rest, _ = proc.communicate(timeout=30)
        for line in rest.splitlines():
            if line.strip():
                try:
                    json.loads(line)
                except json.JSONDecodeError:
                    raise SystemExit(f"spawn-check: a non-JSON line on stdout: {line[:200]!r}")
        print(f"spawn-check: ok in {took:.2f} s, authMethods types {types}")
    finally:
        if proc.poll() is None:
            proc.kill()


if __name__ == "__main__":
    main()
