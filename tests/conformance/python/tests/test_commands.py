"""Slash commands as an SDK client sees them: the ``available_commands_update`` that follows
the session/new response (on the raw byte order), and ``/help`` answered without the model."""

from __future__ import annotations

import pytest
from acp.schema import TextContentBlock

from harness.updates import of_kind, text_of

FIXTURE = "commands"
pytestmark = pytest.mark.asyncio(loop_scope="module")

LIST_TIMEOUT_S = 10
#: Hearth's built-in commands (the list may hold custom ones too).
BUILTINS = ["help", "compact", "undo", "mcp", "model", "mode", "init"]


def is_list(u: dict) -> bool:
    return u.get("sessionUpdate") == "available_commands_update"


async def test_available_commands_update_follows_the_session_new_response(story):
    story.hearth = hearth = await story.scenario.hearth()
    await hearth.initialize()
    story.session_id = sid = (await hearth.conn.new_session(cwd=story.scenario.cwd, mcp_servers=[])).session_id
    await hearth.updates.wait_for(sid, is_list, LIST_TIMEOUT_S)
    [listed] = of_kind(hearth.updates.of(sid), "available_commands_update")
    names = [c["name"] for c in listed["availableCommands"]]
    for name in BUILTINS:
        assert name in names, f"{name} in {names}"
    model = next(c for c in listed["availableCommands"] if c["name"] == "model")
    assert model.get("input", {}).get("hint"), "a command that takes input has a hint"

    transcript = hearth.transcript
    request = transcript.last_request("session/new")
    response = transcript.response_to(request)
    assert response is not None, "session/new response recorded"
    assert not [u for u in transcript.updates_between(sid, request, response) if is_list(u)], "not before the response"
    assert len([u for u in transcript.updates_between(sid, response) if is_list(u)]) == 1, "once, after it"


async def test_help_lists_the_commands_as_an_agent_message_without_the_model(story):
    hearth, sid = story.hearth, story.session_id
    mark = hearth.updates.mark()
    response = await hearth.conn.prompt(
        session_id=sid, prompt=[TextContentBlock(type="text", text=story.fixture.prompts[0])]
    )
    assert response.stop_reason == "end_turn"
    answer = text_of(hearth.updates.of(sid, mark), "agent_message_chunk")
    for name in BUILTINS:
        assert f"/{name}" in answer, f"/{name} in {answer}"
    assert await story.scenario.mock.requests() == [], "no model request"


async def test_hearth_exits_cleanly_and_every_frame_is_valid_acp(story):
    await story.scenario.stop_and_validate()
