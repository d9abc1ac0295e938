"""The validator itself: it must pick definitions from the schema's annotations and reject
bad frames, or "every frame validated" would prove nothing."""

from __future__ import annotations

import pytest

from harness.schema import AcpSchema
from harness.transcript import Transcript

schema = AcpSchema.load()


def prompt_request(_id):
    return "session/prompt"


def chunk(update):
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}


def ask_permission(params):
    """The agent asking the client: a request in the agent's own id space."""
    return {"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": params}


DIFF = {"type": "diff", "path": "/w/a.txt", "oldText": None, "newText": "hi"}
ALLOW_ONCE = {"optionId": "allow_once", "name": "Allow", "kind": "allow_once"}
PENDING_CALL = {"toolCallId": "tc", "title": "Create a.txt", "status": "pending", "content": [DIFF]}
DIFF_WITHOUT_NEW_TEXT = {k: v for k, v in DIFF.items() if k != "newText"}


def test_derives_the_definitions_from_x_method_and_x_side():
    assert schema.notifications["session/update"] == "SessionNotification"
    assert schema.responses["session/prompt"] == "PromptResponse"
    assert schema.responses["session/load"] == "LoadSessionResponse"
    assert schema.requests["session/request_permission"] == "RequestPermissionRequest"


def test_accepts_valid_frames():
    assert schema.problems({"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}}, prompt_request) == []
    text = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}, "messageId": "m"}
    assert schema.problems(chunk(text), prompt_request) == []
    not_found = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32002, "message": "no", "data": {"sessionId": "s"}}}
    assert schema.problems(not_found, prompt_request) == []
    ask = ask_permission({"sessionId": "s", "toolCall": PENDING_CALL, "options": [ALLOW_ONCE]})
    assert schema.problems(ask, lambda _id: None) == []
    output = {"terminal_output": {"terminal_id": "tc", "data": "hi\n"}}
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "tc", "_meta": output}
    assert schema.problems(chunk(update), prompt_request) == []


@pytest.mark.parametrize(
    "frame",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "finished"}},
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        chunk({"sessionUpdate": "agent_message_chunk"}),
        chunk({"sessionUpdate": "no_such_update", "content": {"type": "text", "text": "x"}}),
        {"jsonrpc": "2.0", "id": 1, "error": {"code": "oops", "message": "x"}},
        {"jsonrpc": "1.0", "id": 1, "result": {"stopReason": "end_turn"}},
        {"jsonrpc": "2.0", "method": "session/unknown", "params": {}},
        {"jsonrpc": "2.0", "id": 0, "method": "session/unknown", "params": {}},
        ask_permission({"sessionId": "s", "toolCall": PENDING_CALL}),
        ask_permission({"sessionId": "s", "toolCall": PENDING_CALL, "options": [{**ALLOW_ONCE, "kind": "allow_forever"}]}),
        ask_permission(
            {"sessionId": "s", "toolCall": {**PENDING_CALL, "content": [DIFF_WITHOUT_NEW_TEXT]}, "options": [ALLOW_ONCE]}
        ),
        chunk({"sessionUpdate": "tool_call_update", "toolCallId": "tc", "_meta": "terminal output"}),
        chunk({"sessionUpdate": "tool_call_update", "toolCallId": "tc", "status": "stopped"}),
    ],
)
def test_rejects_frames_that_break_the_schema(frame):
    assert schema.problems(frame, prompt_request) != []


def test_rejects_a_response_to_a_request_the_client_never_sent():
    problems = schema.problems({"jsonrpc": "2.0", "id": 9, "result": {}}, lambda _id: None)
    assert any("never used" in p for p in problems)


def test_reports_lines_that_are_not_json_or_not_terminated():
    transcript = Transcript()
    transcript.record("out", b'{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}')
    transcript.record("in", b'{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}')
    transcript.record("in", b"not json")
    transcript.record("in", b'{"jsonrpc":', "line not terminated by \\n at end of stream")
    problems = transcript.schema_problems(schema)
    assert len(problems) == 2, problems
    assert "not a JSON frame" in problems[0]
    assert "not terminated" in problems[1]
