"""session/cancel while the model is mid-stream: the prompt ends with ``cancelled`` long
before the stalled stream would have, and the session stays usable."""

from __future__ import annotations

import asyncio

import pytest
from acp.schema import TextContentBlock

from harness.updates import of_kind, text_of

FIXTURE = "cancel"
pytestmark = pytest.mark.asyncio(loop_scope="module")

#: Far below the script's 30 s stall: an answer within this proves the cancel worked.
CANCEL_DEADLINE_S = 10


def text_prompt(text: str) -> list[TextContentBlock]:
    return [TextContentBlock(type="text", text=text)]


async def test_cancel_mid_stream_ends_the_prompt_with_cancelled(story):
    story.hearth = hearth = await story.scenario.hearth()
    await hearth.initialize()
    story.session_id = sid = (await hearth.conn.new_session(cwd=story.scenario.cwd, mcp_servers=[])).session_id

    mark = hearth.updates.mark()
    turn = asyncio.create_task(hearth.conn.prompt(session_id=sid, prompt=text_prompt(story.fixture.prompts[0])))
    # The text before the stall has arrived: the model stream is open and stalled.
    await hearth.updates.wait_for(sid, lambda u: u["sessionUpdate"] == "agent_message_chunk", CANCEL_DEADLINE_S)

    await hearth.conn.cancel(session_id=sid)
    response = await asyncio.wait_for(turn, CANCEL_DEADLINE_S)
    assert response.stop_reason == "cancelled"
    assert text_of(hearth.updates.of(sid, mark), "agent_message_chunk") == story.fixture.before_stall[0]


async def test_the_session_answers_the_next_prompt_normally(story):
    hearth, sid = story.hearth, story.session_id
    mark = hearth.updates.mark()
    response = await hearth.conn.prompt(session_id=sid, prompt=text_prompt(story.fixture.prompts[1]))
    assert response.stop_reason == "end_turn"
    turn = hearth.updates.of(sid, mark)
    assert text_of(turn, "agent_message_chunk") == story.fixture.answers[1]
    assert of_kind(turn, "session_info_update") == []


async def test_hearth_exits_cleanly_and_every_frame_is_valid_acp(story):
    await story.scenario.stop_and_validate()
