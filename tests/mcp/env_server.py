"""A stdio MCP server that tells what environment it was started with (official `mcp` SDK),
for the tests of what Hearth passes to the children it starts: provider credentials must not
reach an MCP server unless its own entry names them, and a confinement policy's wrapper must.

    python env_server.py

Tools:
    env(name)   -> the value of the environment variable `name`, or "(unset)"
"""

from __future__ import annotations

import os

import mcp.types as types
from mcp.server.mcpserver import MCPServer

UNSET = "(unset)"


def main() -> None:
    server = MCPServer(name="env", version="1.0.0")

    # Read-only, so that a call runs without a permission request.
    @server.tool(
        description="The value of an environment variable of this server's process.",
        annotations=types.ToolAnnotations(read_only_hint=True),
    )
    def env(name: str) -> str:
        return os.environ.get(name, UNSET)

    server.run("stdio")


if __name__ == "__main__":
    main()
