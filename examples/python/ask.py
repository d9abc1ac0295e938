"""A tiny Python host: Hearth runs inside this process and the official ACP Python SDK
(``acp``) talks to it through ``hearth.aio``. Asks one question, prints the streamed answer.

    OPENAI_API_KEY=... python ask.py "What does this project do?"

The engine reads the provider from the environment (``OPENAI_API_KEY``, and
``OPENAI_BASE_URL`` for any OpenAI-compatible server); see README.md to run it against the
scripted mock LLM instead.
"""

from __future__ import annotations

import argparse
import asyncio
import os
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

from hearth.aio import EngineTransport


class PrintingClient:
    """The client half the SDK calls into: prints answer text as it streams in."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
            print(update.content.text, end="", flush=True)

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any) -> Any:
        # A question-answering host: it grants the agent no tool that needs permission.
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


async def ask(question: str, model: str | None) -> str:
    config: dict[str, Any] = {"dataDir": ":memory:"}  # nothing to keep after this run
    if model:
        config["model"] = model
    conn = acp.connect_to_agent(PrintingClient(), EngineTransport(config))
    try:
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            # Hearth then reads and runs everything itself instead of asking this host.
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=False, write_text_file=False), terminal=False
            ),
            client_info=Implementation(name="hearth-python-example", version="0.1.0"),
        )
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        response = await conn.prompt(
            session_id=session.session_id, prompt=[TextContentBlock(type="text", text=question)]
        )
        print()
        return response.stop_reason
    finally:
        await conn.close()  # closes the transport, and so the engine


def main() -> None:
    parser = argparse.ArgumentParser(description="Ask Hearth one question; print the streamed answer.")
    parser.add_argument("question")
    parser.add_argument("--model", help="model id (default: HEARTH_MODEL, else the engine's default)")
    args = parser.parse_args()
    try:
        stop_reason = asyncio.run(ask(args.question, args.model))
    except acp.RequestError as error:  # e.g. no credential: the agent says what to set
        raise SystemExit(f"hearth: {error} {error.data or ''}") from None
    if stop_reason != "end_turn":
        raise SystemExit(f"the turn ended with {stop_reason!r}")


if __name__ == "__main__":
    main()
