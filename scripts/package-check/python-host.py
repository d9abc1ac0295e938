"""The wheel check's host, run by a fresh venv's python that installed the hearth-acp wheel:
one session with the official ACP Python SDK (``acp``) over ``hearth.aio``, Hearth inside
this process.

    python python-host.py CONFIG_FILE

Prints the answer's text, then ``[stopReason]``; exits non-zero unless the turn ended with end_turn.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import acp
from acp.schema import (
    AgentMessageChunk,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    RequestPermissionResponse,
    TextContentBlock,
)

import hearth.aio


class Client:
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
            print(update.content.text, end="", flush=True)

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any) -> Any:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


async def main(config_file: str) -> str:
    with open(config_file, encoding="utf-8") as f:
        config = json.load(f)
    conn = acp.connect_to_agent(Client(), hearth.aio.EngineTransport(config))
    try:
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=False, write_text_file=False), terminal=False
            ),
            client_info=Implementation(name="hearth-package-check", version="0.0.0"),
        )
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        response = await conn.prompt(
            session_id=session.session_id, prompt=[TextContentBlock(type="text", text="Say hello.")]
        )
        print(f"\n[{response.stop_reason}]")
        return response.stop_reason
    finally:
        await conn.close()


if __name__ == "__main__":
    if asyncio.run(main(sys.argv[1])) != "end_turn":
        sys.exit(1)
