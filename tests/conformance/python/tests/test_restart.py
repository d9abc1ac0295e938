"""Durability: a session survives its Hearth being killed (SIGKILL, no shutdown), and a new
Hearth on the same data dir lists it and replays it."""

from __future__ import annotations

import signal

import pytest
from acp.schema import TextContentBlock

from harness.updates import messages

FIXTURE = "restart"
pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_prompt_answered_before_the_kill(story):
    first = await story.scenario.hearth()
    await first.initialize()
    story.session_id = sid = (await first.conn.new_session(cwd=story.scenario.cwd, mcp_servers=[])).session_id
    response = await first.conn.prompt(
        session_id=sid, prompt=[TextContentBlock(type="text", text=story.fixture.prompts[0])]
    )
    assert response.stop_reason == "end_turn"
    assert await first.kill() == -signal.SIGKILL


async def test_listed_and_replayed_by_a_new_hearth_on_the_same_data_dir(story):
    fixture, sid, project = story.fixture, story.session_id, story.scenario.cwd
    second = await story.scenario.hearth()
    await second.initialize()

    listed = await second.conn.list_sessions(cwd=project)
    found = next((s for s in listed.sessions if s.session_id == sid), None)
    assert found is not None, f"session {sid} listed after the restart"
    assert found.title == fixture.prompts[0]

    mark = second.updates.mark()
    await second.conn.load_session(cwd=project, session_id=sid, mcp_servers=[])
    assert messages(second.updates.of(sid, mark)) == [
        ("user_message_chunk", fixture.prompts[0]),
        ("agent_thought_chunk", fixture.thoughts[0]),
        ("agent_message_chunk", fixture.answers[0]),
    ]


async def test_hearth_exits_cleanly_and_every_frame_is_valid_acp(story):
    await story.scenario.stop_and_validate()
