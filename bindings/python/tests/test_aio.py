"""The official ACP Python SDK (``acp``) drives Hearth in-process through hearth.aio."""

from __future__ import annotations

import asyncio
from typing import Any

import acp
import pytest
from acp.schema import (
    AgentMessageChunk,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    RequestPermissionResponse,
    TextContentBlock,
)

import hearth
from hearth.aio import EngineTransport


class RecordingClient:
    """The client side the SDK dispatches to: records the streamed answer text."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.first_chunk = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
            self.text.append(update.content.text)
            self.first_chunk.set()

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any) -> Any:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


async def initialize(conn: acp.ClientSideConnection) -> None:
    response = await conn.initialize(
        protocol_version=acp.PROTOCOL_VERSION,
        client_capabilities=ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=False, write_text_file=False), terminal=False
        ),
        client_info=Implementation(name="hearth-python-tests", version="0.0.0"),
    )
    assert response.protocol_version == 1
    assert response.agent_info is not None and response.agent_info.name == "hearth"


def say(text: str) -> list[TextContentBlock]:
    return [TextContentBlock(type="text", text=text)]


@pytest.mark.asyncio
async def test_the_sdk_client_runs_a_session_and_cancels_a_prompt(agent_config, tmp_path):
    config = agent_config(
        [
            {"events": [{"text": "Hello"}, {"text": " from"}, {"text": " Hearth"}], "finish": "stop"},
            {"events": [{"text": "Let me think"}, {"stallMs": 30000}, {"text": "never sent"}]},
        ]
    )
    client = RecordingClient()
    transport = EngineTransport(config)
    conn = acp.connect_to_agent(client, transport)
    try:
        await initialize(conn)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert session.session_id

        answered = await conn.prompt(session_id=session.session_id, prompt=say("greet me"))
        assert answered.stop_reason == "end_turn"
        assert "".join(client.text) == "Hello from Hearth"

        client.text.clear()
        client.first_chunk.clear()
        in_flight = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=say("think hard")))
        await asyncio.wait_for(client.first_chunk.wait(), 10)
        await conn.cancel(session_id=session.session_id)
        cancelled = await asyncio.wait_for(in_flight, 10)
        assert cancelled.stop_reason == "cancelled"
        assert "".join(client.text) == "Let me think"
    finally:
        await conn.close()
    # Closing the connection closed the transport, and with it the engine.
    assert await transport.receive() is None
    with pytest.raises(hearth.ClosedError):
        await transport.send({"jsonrpc": "2.0", "id": 99, "method": "initialize", "params": {}})


@pytest.mark.asyncio
async def test_the_transport_ends_the_stream_after_the_last_frame():
    transport = EngineTransport({"dataDir": ":memory:"})
    await transport.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    await transport.send({"jsonrpc": "2.0", "id": 2, "method": "no/such-method"})
    async with transport:
        first = await transport.receive()
        assert first is not None and first["id"] == 1 and first["result"]["protocolVersion"] == 1
    await transport.close()  # a second close is fine
    # The frame delivered before close is still there, then the end of the stream, for good.
    second = await transport.receive()
    assert second is not None and second["id"] == 2 and second["error"]["code"] == -32601
    assert await transport.receive() is None
    assert await transport.receive() is None
