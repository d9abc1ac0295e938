"""Tool calls behind a permission request: the model calls ``write``, Hearth asks the client
(``session/request_permission``, with the diff), and the official client's permission
callback answers — allow once in the first turn, reject once in the second."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from acp.schema import TextContentBlock

from harness.mock_llm import content_text, tool_results
from harness.paths import hearth_path
from harness.updates import of_kind, text_of, tool_call_statuses

FIXTURE = "permissions"
pytestmark = pytest.mark.asyncio(loop_scope="module")

#: The options Hearth offers for an edit inside the workspace: (optionId, kind), in order.
EDIT_OPTIONS = [
    ("allow_once", "allow_once"),
    ("allow_always", "allow_always"),
    ("reject_once", "reject_once"),
    ("reject_always", "reject_always"),
]


def _without_old_text(diff: dict) -> dict:
    return {k: v for k, v in diff.items() if k != "oldText"}


async def write_turn(story, prompt_index: int, call_response: int, choice: str) -> SimpleNamespace:
    """Runs one prompt whose model calls ``write`` once, answering the permission request
    with ``choice``; makes the checks both outcomes share and returns what the test needs.

    ``call_response``: index of the scripted response holding the ``write`` call."""
    hearth, sid, fixture = story.hearth, story.session_id, story.fixture
    [call] = fixture.tool_calls[call_response]
    file = story.scenario.project / call["arguments"]["path"]
    asked = len(hearth.permissions.requests)
    mark = hearth.updates.mark()
    hearth.permissions.choose(choice)

    response = await hearth.conn.prompt(
        session_id=sid, prompt=[TextContentBlock(type="text", text=fixture.prompts[prompt_index])]
    )
    assert response.stop_reason == "end_turn"
    turn = hearth.updates.of(sid, mark)

    # The announced call: pending, an edit of the file, the model's input, the diff.
    starts = of_kind(turn, "tool_call")
    assert len(starts) == 1, "one tool call announced"
    [start] = starts
    expected_diff = {"type": "diff", "path": hearth_path(file), "newText": call["arguments"]["content"]}
    assert start["status"] == "pending"
    assert start["kind"] == "edit"
    assert start["rawInput"] == call["arguments"]
    assert [loc["path"] for loc in start.get("locations", [])] == [hearth_path(file)]
    start_diffs = [c for c in start.get("content", []) if c["type"] == "diff"]
    assert [_without_old_text(d) for d in start_diffs] == [expected_diff]
    assert all(d.get("oldText") is None for d in start_diffs)

    # The permission request: about that call, the four options, the diff of a new file.
    requests = hearth.permissions.requests[asked:]
    assert len(requests) == 1, "one permission request"
    [request] = requests
    assert request["sessionId"] == sid
    assert request["toolCall"]["toolCallId"] == start["toolCallId"]
    assert [(o["optionId"], o["kind"]) for o in request["options"]] == EDIT_OPTIONS
    diffs = [c for c in request["toolCall"].get("content", []) if c["type"] == "diff"]
    assert len(diffs) == 1, "the request carries the diff"
    assert diffs[0].get("oldText") is None, "no old text: the file is new"
    assert _without_old_text(diffs[0]) == expected_diff

    # On the wire: announced, then asked, and only then (if at all) started.
    frames = [e.frame for e in hearth.transcript.incoming() if e.parsed and isinstance(e.frame, dict)]
    tool_call_id = start["toolCallId"]

    def where(pred) -> int:
        return next((i for i, f in enumerate(frames) if pred(f)), -1)

    def update(f: dict) -> dict:
        return (f.get("params") or {}).get("update") or {}

    announced = where(lambda f: update(f).get("sessionUpdate") == "tool_call" and update(f).get("toolCallId") == tool_call_id)
    asked_at = where(
        lambda f: f.get("method") == "session/request_permission"
        and f["params"].get("toolCall", {}).get("toolCallId") == tool_call_id
    )
    started = where(lambda f: update(f).get("toolCallId") == tool_call_id and update(f).get("status") == "in_progress")
    assert announced >= 0 and asked_at > announced, "the permission request follows the tool_call"
    if started >= 0:
        assert started > asked_at, "in_progress only after the answer"

    return SimpleNamespace(
        call=call, file=file, turn=turn, start=start, statuses=tool_call_statuses(turn, tool_call_id)
    )


async def test_a_write_approved_once_runs(story):
    story.hearth = await story.scenario.hearth()
    await story.hearth.initialize()
    story.session_id = (await story.hearth.conn.new_session(cwd=story.scenario.cwd, mcp_servers=[])).session_id

    t = await write_turn(story, 0, 0, "allow_once")
    assert t.statuses == ["pending", "in_progress", "completed"]
    done = [u for u in t.turn if u.get("toolCallId") == t.start["toolCallId"] and u.get("status") == "completed"]
    assert isinstance(done[-1].get("content"), list), "completed update carries content"
    assert t.file.is_file(), f"{t.file} written"
    assert t.file.read_text() == t.call["arguments"]["content"]
    assert text_of(t.turn, "agent_message_chunk") == story.fixture.answers[1]

    requests = await story.scenario.mock.requests()
    assert len(requests) == 2, "the tool call, then the follow-up"
    results = tool_results(requests[1], t.call["id"])
    assert len(results) == 1, "the follow-up request carries the tool result"
    assert "reject" not in content_text(results[0]).lower()


async def test_a_write_rejected_once_does_not_run_and_the_model_is_told(story):
    t = await write_turn(story, 1, 2, "reject_once")
    assert t.statuses[-1] == "failed", f"final status failed, got {' → '.join(t.statuses)}"
    assert "in_progress" not in t.statuses and "completed" not in t.statuses, t.statuses
    assert not t.file.exists(), f"{t.file} must not exist"
    assert text_of(t.turn, "agent_message_chunk") == story.fixture.answers[3]

    requests = await story.scenario.mock.requests()
    assert len(requests) == 4, "two per turn: the tool call, then the follow-up"
    results = tool_results(requests[3], t.call["id"])
    assert len(results) == 1, "the follow-up request answers the rejected call"
    assert "rejected" in content_text(results[0]).lower()


async def test_hearth_exits_cleanly_and_every_frame_is_valid_acp(story):
    await story.scenario.stop_and_validate()
