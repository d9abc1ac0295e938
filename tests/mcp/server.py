"""A real MCP server for Hearth's tests, written with the official Python SDK (`mcp` 2.x).

    python server.py --name NAME              # stdio (the default)
    python server.py --name NAME --http PORT  # streamable HTTP on 127.0.0.1:PORT, path /mcp
                                              # (PORT 0 picks a free port)

With --http the server prints one line, `listening http://127.0.0.1:PORT/mcp`, on stdout
as soon as the port is bound, so a test can read the URL and connect.

Tools (see README.md for what each is for):
    echo(text)        read-only (annotations.readOnlyHint) -> text
    add(a, b)         -> text "a+b" and structured content {"sum": a+b} (with an outputSchema)
    fail(message)     -> an isError result whose text is `message`
    slow(seconds)     -> sleeps, then "slept N"; a cancellation is written to MCP_TEST_CANCEL_LOG
    image()           -> a 1x1 PNG image content
    resource()        -> an embedded text resource
    link()            -> a resource_link content
    whoami()          -> the server's --name (tells two servers with the same tools apart)
    crash()           -> the process exits at once, without answering
    grow()            -> registers the tool `extra` and sends notifications/tools/list_changed
    pick_colour()     -> asks the client (form elicitation, an enum `colour`), then
                         "picked COLOUR", or the action ("decline", "cancel")

Prompts:
    review(topic, style="brief")  -> one user message "Review {topic} ({style}) for {name}."

Environment variables (all optional):
    MCP_TEST_CANCEL_LOG=PATH   slow() appends "slow started id=..", and on cancellation
                               "notifications/cancelled id=.. reason=.." (the notification
                               arrived) and "slow interrupted id=.." (the sleep was cut short)
    MCP_TEST_SILENT=1          never answer the initialize handshake: read stdin until EOF
                               (with --http: listen on the port but never accept)
    MCP_TEST_PIDFILE=PATH      append "server PID" (and "grandchild PID") at startup
    MCP_TEST_GRANDCHILD=1      start a child process (`sleep`) of our own, as a real server
                               launched through npx or a shell would have
    MCP_TEST_STUBBORN=1        ignore SIGTERM and keep running after stdin closes, so only
                               SIGKILL stops the server
"""

from __future__ import annotations

import argparse
import base64
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Annotated, Any, Literal

import anyio
from pydantic import BaseModel

import mcp.types as types
from mcp.server import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer

# A 1x1 PNG, one opaque red RGBA pixel (70 bytes; chunk CRCs checked).
TINY_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)


def log(line: str) -> None:
    """Diagnostics go to stderr: stdout is the MCP channel in stdio mode."""
    print(f"[test-server] {line}", file=sys.stderr, flush=True)


def append_line(env_var: str, line: str) -> None:
    path = os.environ.get(env_var)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")


class Sum(BaseModel):
    sum: float


class Colour(BaseModel):
    colour: Literal["red", "green", "blue"]


def build_server(name: str) -> MCPServer:
    async def record_cancellations(ctx: Any, call_next: Any) -> Any:
        """Middleware: write down every notifications/cancelled the server receives."""
        if ctx.method == "notifications/cancelled":
            params = ctx.params or {}
            append_line(
                "MCP_TEST_CANCEL_LOG",
                f"notifications/cancelled id={params.get('requestId')} reason={params.get('reason')}",
            )
        return await call_next(ctx)

    server = MCPServer(name=name, version="1.0.0", middleware=[record_cancellations])

    # MCPServer advertises `tools.listChanged: false` unless told otherwise; this server does
    # send the notification (grow), so say so in the initialize result, stdio and HTTP alike.
    lowlevel = server._lowlevel_server  # noqa: SLF001 (no public knob in mcp 2.3)
    default_init_options = lowlevel.create_initialization_options

    def init_options_with_list_changed(notification_options: Any = None, *args: Any, **kwargs: Any) -> Any:
        return default_init_options(notification_options or NotificationOptions(tools_changed=True), *args, **kwargs)

    lowlevel.create_initialization_options = init_options_with_list_changed

    @server.tool(
        description="Echo the text back.",
        annotations=types.ToolAnnotations(title="Echo", read_only_hint=True),
    )
    def echo(text: str) -> str:
        return text

    @server.tool(description="Add two numbers; the sum as text and as structured content.")
    def add(a: float, b: float) -> Annotated[types.CallToolResult, Sum]:
        total = a + b
        shown = str(int(total)) if total == int(total) else str(total)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=shown)],
            structured_content={"sum": total},
        )

    @server.tool(description="Always fails: an isError result carrying the message.")
    def fail(message: str) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)

    @server.tool(description="Sleep for the given number of seconds, then answer.")
    async def slow(seconds: float, ctx: Context) -> str:
        request_id = ctx.request_id
        append_line("MCP_TEST_CANCEL_LOG", f"slow started id={request_id} seconds={seconds}")
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            append_line("MCP_TEST_CANCEL_LOG", f"slow interrupted id={request_id}")
            log(f"slow({seconds}) interrupted, request {request_id}")
            raise
        return f"slept {seconds}"

    @server.tool(description="A tiny PNG image.", annotations=types.ToolAnnotations(read_only_hint=True))
    def image() -> types.CallToolResult:
        data = base64.b64encode(TINY_PNG).decode("ascii")
        return types.CallToolResult(content=[types.ImageContent(type="image", data=data, mime_type="image/png")])

    @server.tool(description="An embedded text resource.", annotations=types.ToolAnnotations(read_only_hint=True))
    def resource() -> types.CallToolResult:
        contents = types.TextResourceContents(
            uri=f"test://{name}/note.txt", mime_type="text/plain", text=f"a note from {name}"
        )
        return types.CallToolResult(content=[types.EmbeddedResource(type="resource", resource=contents)])

    @server.tool(description="A link to a resource (resource_link content).")
    def link() -> types.CallToolResult:
        return types.CallToolResult(
            content=[
                types.ResourceLink(
                    type="resource_link", uri=f"test://{name}/note.txt", name="note.txt", mime_type="text/plain"
                )
            ]
        )

    @server.tool(description="The name this server was started with.")
    def whoami() -> str:
        return name

    @server.tool(description="Exit the server process at once (a server that dies mid-session).")
    def crash() -> str:
        log("crash() called: exiting with status 3")
        os._exit(3)

    @server.tool(description="Register the tool `extra` and send notifications/tools/list_changed.")
    async def grow(ctx: Context) -> str:
        if "extra" not in {tool.name for tool in await server.list_tools()}:

            def extra() -> str:
                return "extra"

            server.add_tool(extra, name="extra", description="Added by grow().")
        # Sessions that began with `initialize` (2025-11-25 and older) get the notification on
        # the session; 2026-07-28 clients get it on their subscriptions/listen stream.
        await ctx.session.send_tool_list_changed()
        await ctx.notify_tools_changed()
        return "grew: extra"

    @server.tool(description="Ask the user to pick a colour (an MCP form elicitation).")
    async def pick_colour(ctx: Context) -> str:
        result = await ctx.elicit("Which colour?", Colour)
        if result.action == "accept":
            return f"picked {result.data.colour}"
        return result.action

    @server.prompt(description="Ask for a review of a topic.")
    def review(topic: str, style: str = "brief") -> str:
        return f"Review {topic} ({style}) for {name}."

    return server


def start_test_processes() -> None:
    append_line("MCP_TEST_PIDFILE", f"server {os.getpid()}")
    if os.environ.get("MCP_TEST_GRANDCHILD") == "1":
        # Not on our stdio: a child holding the MCP pipe would delay the client's EOF.
        quiet = subprocess.DEVNULL
        child = subprocess.Popen(["sleep", "3600"], stdin=quiet, stdout=quiet, stderr=quiet)
        append_line("MCP_TEST_PIDFILE", f"grandchild {child.pid}")
    if os.environ.get("MCP_TEST_STUBBORN") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def listen(port: int) -> socket.socket:
    """Bind 127.0.0.1:PORT (0: any free port) and announce the URL on stdout."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    port = sock.getsockname()[1]
    # Connections made from here on wait in the listen backlog until they are accepted.
    print(f"listening http://127.0.0.1:{port}/mcp", flush=True)
    return sock


def stay_silent(http_port: int | None) -> None:
    """Never answer the handshake. stdio: read stdin until it closes. HTTP: listen but never
    accept, so a client's connection waits in the backlog; exit when stdin closes."""
    sock = listen(http_port) if http_port is not None else None
    log("MCP_TEST_SILENT=1: not answering anything")
    for _ in sys.stdin.buffer:
        pass
    if sock is not None:
        sock.close()


async def serve_http(server: MCPServer, port: int) -> None:
    import uvicorn

    sock = listen(port)
    log(f"streamable HTTP on 127.0.0.1:{sock.getsockname()[1]}")
    config = uvicorn.Config(server.streamable_http_app(host="127.0.0.1"), log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="test", help="server name (serverInfo.name, whoami)")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT")
    args = parser.parse_args()

    start_test_processes()
    if os.environ.get("MCP_TEST_SILENT") == "1":
        stay_silent(args.http)
    else:
        server = build_server(args.name)
        if args.http is not None:
            anyio.run(serve_http, server, args.http)
        else:
            log(f"{args.name}: stdio")
            server.run("stdio")
    if os.environ.get("MCP_TEST_STUBBORN") == "1":
        log("MCP_TEST_STUBBORN=1: stdin closed, staying alive")
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
