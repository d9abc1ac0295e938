"""Smoke check of server.py with the official Python MCP client (not part of CI).

    .venv/bin/python smoke.py

Over stdio and over streamable HTTP: initialize, list the tools, call echo/add/fail/image/
resource/link/whoami, start slow() and cancel it (and read MCP_TEST_CANCEL_LOG to see that
the server saw the cancellation), call grow() and wait for notifications/tools/list_changed.
Then, over stdio only: crash() mid-session, a MCP_TEST_SILENT=1 server that never answers
the handshake, and server-everything (echo, get-sum). Run setup.sh first. Exits non-zero at
the first check that fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator

import anyio

import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).resolve().parent
SERVER = str(HERE / "server.py")


def check(condition: bool, what: str) -> None:
    print(f"  {'ok  ' if condition else 'FAIL'} {what}", flush=True)
    if not condition:
        sys.exit(1)


class Notifications:
    def __init__(self) -> None:
        self.tools_changed = anyio.Event()

    async def __call__(self, message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.tools_changed.set()


async def wait_for_line(path: Path, prefix: str, timeout: float = 10) -> str:
    with anyio.fail_after(timeout):
        while True:
            if path.exists():
                for line in path.read_text().splitlines():
                    if line.startswith(prefix):
                        return line
            await anyio.sleep(0.05)


@asynccontextmanager
async def stdio_session(env: dict[str, str], notifications: Notifications) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=[SERVER, "--name", "smoke-stdio"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=notifications) as session:
            yield session


@asynccontextmanager
async def http_session(env: dict[str, str], notifications: Notifications) -> AsyncIterator[ClientSession]:
    proc = subprocess.Popen(
        [sys.executable, SERVER, "--name", "smoke-http", "--http", "0"],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline().strip()  # "listening http://127.0.0.1:PORT/mcp"
        url = line.split(" ", 1)[1]
        print(f"  (server says: {line})")
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write, message_handler=notifications) as session:
                yield session
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def text_of(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def exercise(transport: str, opener) -> None:
    print(f"== {transport}")
    cancel_log = Path(tempfile.mkdtemp()) / "cancel.log"
    notifications = Notifications()
    env = {"MCP_TEST_CANCEL_LOG": str(cancel_log)}
    async with opener(env, notifications) as session:
        started = time.monotonic()
        init = await session.initialize()
        check(True, f"initialize: protocol {init.protocol_version}, server {init.server_info.name}, "
              f"tools.listChanged={init.capabilities.tools.list_changed} ({time.monotonic() - started:.2f}s)")

        tools = (await session.list_tools()).tools
        read_only = sorted(t.name for t in tools if t.annotations and t.annotations.read_only_hint)
        check({"echo", "add", "fail", "slow", "image", "resource", "crash", "grow"} <= {t.name for t in tools},
              f"tools/list: {[t.name for t in tools]}; readOnlyHint: {read_only}")

        result = await session.call_tool("echo", {"text": "hello"})
        check(text_of(result) == "hello" and not result.is_error, f"echo -> {text_of(result)!r}")

        result = await session.call_tool("add", {"a": 2, "b": 3})
        check(text_of(result) == "5" and result.structured_content == {"sum": 5.0},
              f"add -> text {text_of(result)!r}, structuredContent {result.structured_content}")

        result = await session.call_tool("fail", {"message": "it broke"})
        check(result.is_error is True and text_of(result) == "it broke", f"fail -> isError={result.is_error}, {text_of(result)!r}")

        result = await session.call_tool("image", {})
        image = result.content[0]
        check(isinstance(image, types.ImageContent) and image.mime_type == "image/png",
              f"image -> {image.type} {image.mime_type}, {len(image.data)} base64 chars")

        result = await session.call_tool("resource", {})
        res = result.content[0]
        check(isinstance(res, types.EmbeddedResource) and res.resource.text.startswith("a note from"),
              f"resource -> {res.type} {res.resource.uri} {res.resource.text!r}")

        result = await session.call_tool("link", {})
        check(isinstance(result.content[0], types.ResourceLink), f"link -> {result.content[0].type} {result.content[0].uri}")

        result = await session.call_tool("whoami", {})
        check(text_of(result).startswith("smoke-"), f"whoami -> {text_of(result)!r}")

        # slow(): start it, wait until the server runs it, cancel the caller's scope.
        async with anyio.create_task_group() as tg:

            async def call_slow() -> None:
                await session.call_tool("slow", {"seconds": 30})

            tg.start_soon(call_slow)
            await wait_for_line(cancel_log, "slow started")
            began = time.monotonic()
            tg.cancel_scope.cancel()
        seen = await wait_for_line(cancel_log, "notifications/cancelled")
        interrupted = await wait_for_line(cancel_log, "slow interrupted")
        check(True, f"slow cancelled; server log: {seen!r}, {interrupted!r} ({time.monotonic() - began:.2f}s)")
        result = await session.call_tool("echo", {"text": "still here"})
        check(text_of(result) == "still here", "session still usable after the cancellation")

        result = await session.call_tool("grow", {})
        with anyio.fail_after(5):
            await notifications.tools_changed.wait()
        names = [t.name for t in (await session.list_tools()).tools]
        extra = await session.call_tool("extra", {})
        check("extra" in names and text_of(extra) == "extra",
              f"grow -> {text_of(result)!r}; notifications/tools/list_changed received; extra -> {text_of(extra)!r}")


async def crash_and_silence() -> None:
    print("== stdio failures")
    async with stdio_session({}, Notifications()) as session:
        await session.initialize()
        try:
            with anyio.fail_after(10):
                await session.call_tool("crash", {})
            check(False, "crash returned")
        except Exception as error:  # the connection closes under the pending call
            check(True, f"crash -> {type(error).__name__}: {error}")

    started = time.monotonic()
    try:
        # The deadline is outside the session so the TimeoutError is not wrapped in the
        # session's ExceptionGroup; the transport still closes the server's stdin on the way out.
        with anyio.fail_after(3):
            async with stdio_session({"MCP_TEST_SILENT": "1"}, Notifications()) as session:
                await session.initialize()
        check(False, "silent server answered")
    except TimeoutError:
        check(True, f"MCP_TEST_SILENT=1 -> no initialize answer, timed out after {time.monotonic() - started:.1f}s")

    # The HTTP flavour: the port is bound but nothing is ever accepted.
    proc = subprocess.Popen(
        [sys.executable, SERVER, "--http", "0"],
        env={**os.environ, "MCP_TEST_SILENT": "1"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    url = proc.stdout.readline().split(" ", 1)[1].strip()
    started = time.monotonic()
    try:
        with anyio.fail_after(3):
            async with streamable_http_client(url) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
        check(False, "silent HTTP server answered")
    except TimeoutError:
        check(True, f"MCP_TEST_SILENT=1 --http -> no answer at {url}, timed out after {time.monotonic() - started:.1f}s")
    finally:
        proc.stdin.close()  # the server exits when its stdin closes
        proc.wait(timeout=10)


async def everything() -> None:
    """@modelcontextprotocol/server-everything from node_modules (installed by setup.sh)."""
    print("== server-everything (stdio)")
    entry = HERE / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    # GZIP_ALLOWED_DOMAINS keeps its gzip-file-as-resource tool from fetching the internet.
    params = StdioServerParameters(command="node", args=[str(entry), "stdio"], env={"GZIP_ALLOWED_DOMAINS": "127.0.0.1"})
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(True, f"initialize: protocol {init.protocol_version}, server {init.server_info.name} {init.server_info.version}")
            tools = (await session.list_tools()).tools
            check({"echo", "get-sum", "trigger-long-running-operation"} <= {t.name for t in tools}, f"tools/list: {[t.name for t in tools]}")
            result = await session.call_tool("echo", {"message": "hi"})
            check(text_of(result) == "Echo: hi", f"echo -> {text_of(result)!r}")
            result = await session.call_tool("get-sum", {"a": 2, "b": 3})
            check("5" in text_of(result), f"get-sum -> {text_of(result)!r}")


async def main() -> None:
    await exercise("stdio", stdio_session)
    await exercise("streamable HTTP", http_session)
    await crash_and_silence()
    await everything()
    print("smoke: all checks passed")


if __name__ == "__main__":
    anyio.run(main)
