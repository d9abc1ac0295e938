"""A session's whole life through the official Python client: initialize, new, two prompts,
list, close, load (with replay), resume, delete."""

from __future__ import annotations

from datetime import datetime

import pytest
from acp import RequestError
from acp.schema import TextContentBlock

from harness.hearth import API_KEY, MODEL
from harness.mock_llm import content_text
from harness.updates import history, messages, of_kind, text_of

FIXTURE = "lifecycle"
pytestmark = pytest.mark.asyncio(loop_scope="module")


async def prompt(story, text: str, session_id: str | None = None):
    return await story.hearth.conn.prompt(
        session_id=session_id or story.session_id, prompt=[TextContentBlock(type="text", text=text)]
    )


async def test_initialize_answers_version_1_and_advertises_session_methods(story):
    story.hearth = await story.scenario.hearth()
    init = await story.hearth.initialize()
    assert init.protocol_version == 1
    caps = init.agent_capabilities
    assert caps.load_session is True
    assert caps.prompt_capabilities.embedded_context is True
    assert caps.prompt_capabilities.image is True
    assert caps.prompt_capabilities.audio is False
    sessions = caps.session_capabilities
    for method in ("list", "delete", "resume", "close"):
        assert getattr(sessions, method) is not None, f"sessionCapabilities.{method} advertised"
    # No `hearth-auth` (terminal sign-in): this client does not advertise `auth.terminal`.
    assert [m.id for m in init.auth_methods] == ["openai-api-key", "anthropic-api-key"]


async def test_session_new_gives_a_session_id(story):
    response = await story.hearth.conn.new_session(cwd=story.scenario.cwd, mcp_servers=[])
    story.session_id = response.session_id
    assert isinstance(story.session_id, str) and story.session_id


async def test_first_prompt_streams_answer_thought_and_title_then_end_turn(story):
    fixture, updates = story.fixture, story.hearth.updates
    mark = updates.mark()
    response = await prompt(story, fixture.prompts[0])
    assert response.stop_reason == "end_turn"
    turn = story.first_turn = updates.of(story.session_id, mark)

    chunks = of_kind(turn, "agent_message_chunk")
    assert text_of(turn, "agent_message_chunk") == fixture.answers[0]
    assert all(isinstance(c.get("messageId"), str) and c["messageId"] for c in chunks), "every chunk has a messageId"
    assert len({c["messageId"] for c in chunks}) == 1, "one answer, one messageId"
    assert text_of(turn, "agent_thought_chunk") == fixture.thoughts[0]

    infos = of_kind(turn, "session_info_update")
    assert len(infos) == 1, "exactly one session_info_update"
    assert infos[0]["title"] == fixture.prompts[0]


async def test_first_model_request_carries_model_key_and_prompt(story):
    [request] = await story.scenario.mock.requests()
    assert request["body"]["model"] == MODEL
    assert request["body"]["stream"] is True
    assert request["headers"]["authorization"] == f"Bearer {API_KEY}"
    last = request["body"]["messages"][-1]
    assert (last["role"], content_text(last)) == ("user", story.fixture.prompts[0])


async def test_second_prompt_sends_the_first_exchange_to_the_model(story):
    fixture, updates = story.fixture, story.hearth.updates
    mark = updates.mark()
    response = await prompt(story, fixture.prompts[1])
    assert response.stop_reason == "end_turn"
    turn = updates.of(story.session_id, mark)
    assert text_of(turn, "agent_message_chunk") == fixture.answers[1]
    assert of_kind(turn, "session_info_update") == [], "the title is sent once"

    requests = await story.scenario.mock.requests()
    assert len(requests) == 2
    conversation = [
        (m["role"], content_text(m)) for m in requests[1]["body"]["messages"] if m["role"] in ("user", "assistant")
    ]
    assert conversation == [
        ("user", fixture.prompts[0]),
        ("assistant", fixture.answers[0]),
        ("user", fixture.prompts[1]),
    ]


async def test_session_list_finds_it_with_title_and_updated_at(story):
    listed = await story.hearth.conn.list_sessions(cwd=story.scenario.cwd)
    found = next((s for s in listed.sessions if s.session_id == story.session_id), None)
    assert found is not None, f"session {story.session_id} listed"
    assert found.cwd == story.scenario.cwd
    assert found.title == story.fixture.prompts[0]
    datetime.fromisoformat(found.updated_at)  # raises unless ISO 8601


async def test_session_close_succeeds(story):
    await story.hearth.conn.close_session(session_id=story.session_id)


async def test_session_load_replays_the_conversation_before_its_response(story):
    fixture, hearth, sid = story.fixture, story.hearth, story.session_id
    await hearth.conn.load_session(cwd=story.scenario.cwd, session_id=sid, mcp_servers=[])

    # Order as Hearth wrote it: the replay must sit between the request and its response.
    request = hearth.transcript.last_request("session/load", sid)
    response = hearth.transcript.response_to(request)
    assert response is not None, "load response recorded"
    replay = history(hearth.transcript.updates_between(sid, request, response))
    assert history(hearth.transcript.updates_between(sid, response)) == [], "no replay after the response"

    assert [m for m in messages(replay) if m[0] != "agent_thought_chunk"] == [
        ("user_message_chunk", fixture.prompts[0]),
        ("agent_message_chunk", fixture.answers[0]),
        ("user_message_chunk", fixture.prompts[1]),
        ("agent_message_chunk", fixture.answers[1]),
    ]
    assert text_of(replay, "agent_thought_chunk") == text_of(story.first_turn, "agent_thought_chunk"), (
        "the replayed thought equals the streamed one"
    )
    assert of_kind(replay, "session_info_update")[-1]["title"] == fixture.prompts[0]


async def test_session_resume_restores_without_replay(story):
    hearth, sid = story.hearth, story.session_id
    await hearth.conn.resume_session(session_id=sid, cwd=story.scenario.cwd)
    request = hearth.transcript.last_request("session/resume", sid)
    response = hearth.transcript.response_to(request)
    assert response is not None, "resume response recorded"
    assert history(hearth.transcript.updates_between(sid, request, response)) == []


async def test_session_delete_removes_it(story):
    hearth, sid = story.hearth, story.session_id
    resumed = hearth.transcript.response_to(hearth.transcript.last_request("session/resume", sid))
    assert await hearth.delete_session(sid) == {}

    listed = await hearth.conn.list_sessions(cwd=story.scenario.cwd)
    assert sid not in [s.session_id for s in listed.sessions], "deleted session not listed"

    with pytest.raises(RequestError) as error:
        await prompt(story, "anyone there?")
    assert error.value.code == -32002
    assert (error.value.data or {}).get("sessionId") == sid
    assert history(hearth.transcript.updates_between(sid, resumed)) == [], "resume replayed nothing, even late"


async def test_hearth_exits_cleanly_and_every_frame_is_valid_acp(story):
    await story.scenario.stop_and_validate()
