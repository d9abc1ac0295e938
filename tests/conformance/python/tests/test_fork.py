"""``session/fork`` and ``session/set_title`` (unstable) through the official Python client: a
fork's first model request is its parent's context then its own prompt, a cut point in
``_meta.hearth.fork.messageId``, the lineage in ``session/list``, a user title normalised and
announced. Their answers are checked against the unstable schema (harness/schema.py)."""

from __future__ import annotations

import pytest
from acp import RequestError
from acp.schema import TextContentBlock

from harness.mock_llm import content_text
from harness.updates import of_kind

FIXTURE = "fork"
pytestmark = pytest.mark.asyncio(loop_scope="module")


async def prompt(story, text: str, session_id: str) -> str:
    response = await story.hearth.conn.prompt(session_id=session_id, prompt=[TextContentBlock(type="text", text=text)])
    return response.stop_reason


async def fork_of(story, session_id: str, **meta):
    # The SDK sends its keyword arguments as the request's `_meta`.
    return await story.hearth.conn.fork_session(
        session_id=session_id, cwd=story.scenario.cwd, mcp_servers=[], **meta
    )


def conversation(request: dict) -> list[tuple[str, str]]:
    """The ``(role, text)`` of a recorded model request's messages after the system prompt."""
    return [(m["role"], content_text(m)) for m in request["body"]["messages"][1:]]


async def listed(story, session_id: str):
    sessions = (await story.hearth.conn.list_sessions()).sessions
    return next(s for s in sessions if s.session_id == session_id)


async def test_initialize_advertises_fork_and_title(story):
    story.hearth = await story.scenario.hearth()
    init = await story.hearth.initialize()
    assert init.agent_capabilities.session_capabilities.fork is not None
    # SDK 0.12.1 has no `title` capability in its types: read the frame Hearth wrote.
    frame = next(e.frame for e in story.hearth.transcript.incoming() if "agentCapabilities" in e.frame.get("result", {}))
    assert frame["result"]["agentCapabilities"]["sessionCapabilities"]["title"] == {}


async def test_a_fork_of_the_whole_session_sends_the_parents_context_then_its_prompt(story):
    fixture = story.fixture
    story.parent = (await story.hearth.conn.new_session(cwd=story.scenario.cwd, mcp_servers=[])).session_id
    for text in fixture.prompts[:2]:
        assert await prompt(story, text, story.parent) == "end_turn"
    forked = await fork_of(story, story.parent)
    story.fork = forked.session_id
    assert story.fork != story.parent
    assert forked.modes.current_mode_id == "ask"
    assert await prompt(story, fixture.prompts[2], story.fork) == "end_turn"
    requests = await story.scenario.mock.requests()
    assert conversation(requests[2]) == [
        ("user", fixture.prompts[0]),
        ("assistant", fixture.answers[0]),
        ("user", fixture.prompts[1]),
        ("assistant", fixture.answers[1]),
        ("user", fixture.prompts[2]),
    ]


async def test_a_fork_at_a_prompt_keeps_only_what_came_before_it(story):
    fixture, updates = story.fixture, story.hearth.updates
    # The replay names each prompt's messageId.
    mark = updates.mark()
    await story.hearth.conn.load_session(cwd=story.scenario.cwd, session_id=story.parent, mcp_servers=[])
    second = next(
        u for u in of_kind(updates.of(story.parent, mark), "user_message_chunk") if u["content"]["text"] == fixture.prompts[1]
    )
    cut = await fork_of(story, story.parent, hearth={"fork": {"messageId": second["messageId"]}})
    assert await prompt(story, fixture.prompts[3], cut.session_id) == "end_turn"
    requests = await story.scenario.mock.requests()
    assert conversation(requests[3]) == [
        ("user", fixture.prompts[0]),
        ("assistant", fixture.answers[0]),
        ("user", fixture.prompts[3]),
    ]


async def test_an_unknown_cut_point_gets_32602(story):
    with pytest.raises(RequestError) as error:
        await fork_of(story, story.parent, hearth={"fork": {"messageId": "msg_never_sent"}})
    assert error.value.code == -32602, str(error.value)


async def test_session_list_shows_the_forks_lineage(story):
    entry = await listed(story, story.fork)
    lineage = entry.field_meta["hearth"]
    assert lineage["parentSessionId"] == story.parent
    assert isinstance(lineage["forkedAt"], int)
    assert (await listed(story, story.parent)).field_meta is None


async def test_set_title_answers_the_normalised_title_and_announces_it(story):
    updates = story.hearth.updates
    mark = updates.mark()
    assert await story.hearth.set_session_title(story.fork, "  A   side\ttrip  ") == {"title": "A side trip"}
    infos = of_kind(updates.of(story.fork, mark), "session_info_update")
    assert [u["title"] for u in infos] == ["A side trip"]
    assert (await listed(story, story.fork)).title == "A side trip"


async def test_set_title_refuses_an_empty_title_and_an_unknown_session(story):
    with pytest.raises(RequestError) as error:
        await story.hearth.set_session_title(story.fork, " \n ")
    assert error.value.code == -32602, str(error.value)
    with pytest.raises(RequestError) as error:
        await story.hearth.set_session_title("sess_does_not_exist", "A title")
    assert error.value.code == -32002, str(error.value)
    assert error.value.data == {"sessionId": "sess_does_not_exist"}


async def test_hearth_exits_cleanly_and_every_frame_is_valid_acp(story):
    await story.scenario.stop_and_validate()
