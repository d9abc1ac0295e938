"""The errors a client sees on misuse: each with the code clients depend on, and valid
JSON-RPC / ACP error frames (checked by the last test like every other frame)."""

from __future__ import annotations

import pytest
from acp import RequestError
from acp.schema import TextContentBlock

FIXTURE = "errors"
UNKNOWN = "sess_does_not_exist"
pytestmark = pytest.mark.asyncio(loop_scope="module")


async def rejects_with(awaitable, code: int, data: dict | None = None) -> None:
    with pytest.raises(RequestError) as error:
        await awaitable
    assert error.value.code == code, str(error.value)
    if data is not None:
        assert error.value.data == data


async def test_a_request_before_initialize_gets_32600(story):
    story.hearth = hearth = await story.scenario.hearth()
    await rejects_with(hearth.conn.new_session(cwd=story.scenario.cwd, mcp_servers=[]), -32600)
    await hearth.initialize()


async def test_session_new_with_a_relative_cwd_gets_32602(story):
    await rejects_with(story.hearth.conn.new_session(cwd="relative/dir", mcp_servers=[]), -32602)


async def test_unknown_session_ids_get_32002_with_session_id(story):
    conn, cwd, not_found = story.hearth.conn, story.scenario.cwd, {"sessionId": UNKNOWN}
    await rejects_with(conn.load_session(cwd=cwd, session_id=UNKNOWN, mcp_servers=[]), -32002, not_found)
    await rejects_with(conn.resume_session(session_id=UNKNOWN, cwd=cwd), -32002, not_found)
    prompt = [TextContentBlock(type="text", text="hello?")]
    await rejects_with(conn.prompt(session_id=UNKNOWN, prompt=prompt), -32002, not_found)


async def test_session_delete_of_an_unknown_id_succeeds_silently(story):
    assert await story.hearth.delete_session(UNKNOWN) == {}


async def test_an_unknown_method_gets_32601(story):
    # ext_method prepends the `_` of extension methods.
    await rejects_with(story.hearth.conn.ext_method("hearth_conformance/no_such_method", {}), -32601)


async def test_hearth_exits_cleanly_and_every_frame_is_valid_acp(story):
    await story.scenario.stop_and_validate()
