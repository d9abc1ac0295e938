"""Answers made inside ``Engine.send`` reach ``on_frame`` on the calling thread before ``send``
returns; they never nest, never overtake a frame of the delivery thread, and each request is
answered once."""

from __future__ import annotations

import json
import threading

from frames import Inbox, prompt, request

import hearth

OFFLINE = {"dataDir": ":memory:", "providers": {"openai": {"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "unused"}}}


def test_an_answer_made_inside_send_arrives_on_this_thread_before_send_returns():
    inbox = Inbox()
    with hearth.Engine(OFFLINE, inbox.on_frame) as engine:
        engine.send(request(1, "initialize", {"protocolVersion": 1}))
        assert [f["id"] for f in inbox.frames] == [1]
        assert inbox.threads == [threading.get_native_id()]


def test_a_send_from_inside_on_frame_is_answered_after_it_on_the_delivery_thread():
    inbox = Inbox()
    inside: list[int] = []  # callbacks running now
    overlapped = []

    def on_frame(frame: str) -> None:
        overlapped.append(len(inside))
        inside.append(1)
        inbox.on_frame(frame)
        if json.loads(frame).get("id") == 1:
            engine.send(request(2, "initialize", {"protocolVersion": 1}))
        inside.pop()

    with hearth.Engine(OFFLINE, on_frame) as engine:
        engine.send(request(1, "initialize", {"protocolVersion": 1}))
        inbox.response(2)
    assert [f["id"] for f in inbox.frames] == [1, 2]
    assert inbox.threads[0] == threading.get_native_id() != inbox.threads[1]
    assert overlapped == [0, 0]  # never nested: the second answer waited for the first callback


def test_answers_made_inside_send_keep_the_order_of_a_streaming_session(agent_config, tmp_path):
    words = [f"w{i} " for i in range(300)]
    inbox = Inbox()
    with hearth.Engine(agent_config([{"events": [{"text": w} for w in words]}]), inbox.on_frame) as engine:
        engine.send(request(1, "initialize", {"protocolVersion": 1}))
        engine.send(request(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))
        session_id = inbox.response(2)["result"]["sessionId"]
        engine.send(prompt(3, session_id, "go"))
        request_id = 100
        while not any(f.get("id") == 3 for f in list(inbox.frames)):
            request_id += 1
            engine.send(request(request_id, "session/list", {}))
            inbox.response(request_id)
    answered = sorted(f["id"] for f in inbox.frames if "result" in f or "error" in f)
    assert answered == [1, 2, 3, *range(101, request_id + 1)]
    assert inbox.chunks() == "".join(words)
    ids = [f.get("id") for f in inbox.frames]
    last_chunk = max(
        i
        for i, f in enumerate(inbox.frames)
        if f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )
    assert ids.index(3) > last_chunk
