"""hearth.Engine over raw frames: round trips, callback errors, closing, fork, the GIL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from frames import Inbox, prompt, request

import hearth

INITIALIZE = request(1, "initialize", {"protocolVersion": 1})
# For tests that never prompt: a credential so sessions open, and a model nobody calls.
OFFLINE = {"dataDir": ":memory:", "providers": {"openai": {"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "unused"}}}


def start_session(engine: hearth.Engine, inbox: Inbox, cwd: Path) -> str:
    engine.send(INITIALIZE)
    assert inbox.response(1)["result"]["protocolVersion"] == 1
    engine.send(request(2, "session/new", {"cwd": str(cwd), "mcpServers": []}))
    session_id: str = inbox.response(2)["result"]["sessionId"]
    return session_id


def test_raw_frames_round_trip_a_streamed_prompt(agent_config, tmp_path):
    config = agent_config([{"events": [{"text": "Hello"}, {"text": ", frames"}], "finish": "stop"}])
    inbox = Inbox()
    with hearth.Engine(json.dumps(config), inbox.on_frame) as engine:
        session_id = start_session(engine, inbox, tmp_path)
        engine.send(prompt(3, session_id, "say hello"))
        assert inbox.response(3)["result"] == {"stopReason": "end_turn"}
    assert inbox.chunks() == "Hello, frames"
    # Every chunk came before the prompt's answer, and all of the turn on the one delivery
    # thread; the initialize answer, made inside send with nothing ahead, on this thread (so
    # may the session/new answer be, once its write is committed).
    ids = [f.get("id") for f in inbox.frames]
    assert ids.index(3) == len(ids) - 1
    here = threading.get_native_id()
    assert inbox.threads[ids.index(1)] == here
    turn = {thread for thread, frame in zip(inbox.threads, inbox.frames) if frame.get("id") not in (1, 2)}
    assert len(turn) == 1 and here not in turn


def test_send_from_inside_on_frame(tmp_path):
    inbox = Inbox()

    def on_frame(frame: str) -> None:
        inbox.on_frame(frame)
        if json.loads(frame).get("id") == 1:
            engine.send(request(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))

    with hearth.Engine(OFFLINE, on_frame) as engine:
        engine.send(INITIALIZE)
        assert inbox.response(2)["result"]["sessionId"]


def test_a_raising_callback_is_reported_and_delivery_goes_on(monkeypatch):
    reported: list[sys.UnraisableHookArgs] = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    inbox = Inbox()

    def on_frame(frame: str) -> None:
        inbox.on_frame(frame)
        if json.loads(frame).get("id") == 1:
            raise RuntimeError("host bug")

    with hearth.Engine(OFFLINE, on_frame) as engine:
        engine.send(INITIALIZE)
        engine.send(request(2, "no/such-method", {}))
        assert inbox.response(2)["error"]["code"] == -32601
    assert len(reported) == 1
    assert isinstance(reported[0].exc_value, RuntimeError) and str(reported[0].exc_value) == "host bug"
    assert reported[0].object is on_frame


def test_send_after_close_raises_closed_error():
    engine = hearth.Engine(OFFLINE, lambda frame: None)
    engine.close()
    with pytest.raises(hearth.ClosedError, match="closed"):
        engine.send(INITIALIZE)
    assert issubclass(hearth.ClosedError, hearth.HearthError)


def test_close_twice_is_fine():
    engine = hearth.Engine(OFFLINE, lambda frame: None)
    engine.close()
    engine.close()


def test_the_context_manager_closes_and_keeps_the_exception():
    inbox = Inbox()
    with pytest.raises(KeyError), hearth.Engine(OFFLINE, inbox.on_frame) as engine:
        engine.send(INITIALIZE)
        inbox.response(1)
        raise KeyError("from the with block")
    with pytest.raises(hearth.ClosedError):
        engine.send(INITIALIZE)


def test_close_inside_on_frame_is_refused():
    refused: list[BaseException] = []
    done = threading.Event()

    def on_frame(frame: str) -> None:
        if json.loads(frame).get("id") != 1:
            return
        try:
            engine.close()
        except hearth.HearthError as error:
            refused.append(error)
        done.set()

    with hearth.Engine(OFFLINE, on_frame) as engine:
        engine.send(INITIALIZE)
        assert done.wait(10)
        engine.send(request(2, "no/such-method", {}))  # still open
    assert len(refused) == 1 and "inside" in str(refused[0])


def test_bad_config_raises_value_error_naming_the_key():
    with pytest.raises(ValueError, match="workerThreads"):
        hearth.Engine({"dataDir": ":memory:", "workerThreads": 0}, lambda frame: None)
    with pytest.raises(ValueError, match="modle"):
        hearth.Engine('{"modle": "x"}', lambda frame: None)
    with pytest.raises(TypeError, match="callable"):
        hearth.Engine(OFFLINE, "not a function")


def test_a_store_that_cannot_be_opened_raises_hearth_error(tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    with pytest.raises(hearth.HearthError):
        hearth.Engine({"dataDir": str(not_a_dir)}, lambda frame: None)


# Python 3.12+ warns that forking a multi-threaded process is risky: that is the point here.
@pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning")
def test_use_after_fork_is_refused_in_the_child():
    engine = hearth.Engine(OFFLINE, lambda frame: None)
    pid = os.fork()
    if pid == 0:
        # Child: report through the exit code only, and never return into pytest.
        code = 1
        try:
            try:
                engine.send(INITIALIZE)
            except hearth.HearthError as error:
                if "fork" in str(error) and not isinstance(error, hearth.ClosedError):
                    code = 2
            try:
                engine.close()
            except hearth.HearthError:
                code += 1
            # Dropping the inherited engine must not wait for the parent's threads.
            del engine
            code = 0 if code == 3 else code
        finally:
            os._exit(code)
    deadline = time.monotonic() + 20
    while (waited := os.waitpid(pid, os.WNOHANG)) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            pytest.fail("the forked child hung")
        time.sleep(0.02)
    assert os.waitstatus_to_exitcode(waited[1]) == 0
    # The parent's engine is untouched.
    engine.send(INITIALIZE)
    engine.close()


def test_close_releases_the_gil_while_it_waits(agent_config, tmp_path):
    # A turn stalls mid-stream; close() cancels it, and the engine delivers the "cancelled"
    # answer from its own thread while close() waits. That delivery blocks until another
    # Python thread has run, which it can only do if close() released the GIL.
    config = agent_config([{"events": [{"text": "thinking"}, {"stallMs": 30000}, {"text": "never"}]}])
    inbox = Inbox()
    closing = threading.Event()
    helper_ran = threading.Event()
    close_returned = False
    helper_saw_close_returned: list[bool] = []

    def helper() -> None:
        closing.wait(10)
        time.sleep(0.1)
        helper_saw_close_returned.append(close_returned)
        helper_ran.set()

    def on_frame(frame: str) -> None:
        inbox.on_frame(frame)
        if json.loads(frame).get("id") == 3:
            assert helper_ran.wait(10)

    engine = hearth.Engine(config, on_frame)
    session_id = start_session(engine, inbox, tmp_path)
    engine.send(prompt(3, session_id, "think"))
    inbox.expect(lambda f: "agent_message_chunk" in json.dumps(f))
    threading.Thread(target=helper).start()
    closing.set()
    # Holding the GIL here would deadlock; pytest's faulthandler_timeout (pyproject.toml)
    # then dumps every thread's stack and ends the run.
    engine.close()
    close_returned = True
    assert inbox.response(3, timeout=0)["result"] == {"stopReason": "cancelled"}
    assert helper_saw_close_returned == [False]
    assert inbox.chunks() == "thinking"


def hearth_threads() -> list[str]:
    """Names of this process's engine threads (runtime workers, delivery, close hand-off)."""
    names = (task.read_text().strip() for task in Path("/proc/self/task").glob("*/comm"))
    return [name for name in names if name.startswith("hearth-")]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc to list threads")
def test_an_engine_dropped_inside_on_frame_is_still_closed_properly(agent_config, tmp_path):
    # The last reference goes away on the delivery thread, which can't wait for itself: the
    # engine is closed from another thread, so the turn in flight still gets its answer.
    config = agent_config([{"events": [{"text": "partial"}, {"stallMs": 30000}]}])
    inbox = Inbox()
    holder: list[hearth.Engine] = []

    def on_frame(frame: str) -> None:
        inbox.on_frame(frame)
        if "agent_message_chunk" in frame:
            holder.clear()

    holder.append(hearth.Engine(config, on_frame))
    session_id = start_session(holder[0], inbox, tmp_path)
    holder[0].send(prompt(3, session_id, "go"))
    assert inbox.response(3)["result"] == {"stopReason": "cancelled"}
    deadline = time.monotonic() + 10
    while hearth_threads() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert hearth_threads() == []


def test_on_frame_keeps_its_thread_state_from_frame_to_frame(agent_config, tmp_path):
    # The delivery thread stays known to the interpreter between frames (one thread state,
    # not one per frame), so what a callback keeps in thread-local storage is still there.
    seen: list[int] = []
    local = threading.local()
    inbox = Inbox()

    def on_frame(frame: str) -> None:
        if threading.get_native_id() != main:  # answers made inside send come on this thread
            local.count = getattr(local, "count", 0) + 1
            seen.append(local.count)
        inbox.on_frame(frame)

    main = threading.get_native_id()
    # A prompt's chunks (apart in time, so not merged) come on the delivery thread.
    config = agent_config([{"events": [{"text": "a"}, {"stallMs": 50}, {"text": "b"}]}])
    with hearth.Engine(config, on_frame) as engine:
        session_id = start_session(engine, inbox, tmp_path)
        engine.send(prompt(3, session_id, "go"))
        inbox.response(3)
    assert len(seen) >= 3 and seen == list(range(1, len(seen) + 1))


def test_the_interpreter_exits_cleanly_with_an_engine_left_open():
    # The engine is closed while the interpreter finalizes, after its delivery thread has run
    # Python code: that thread's ending must neither hang nor crash the exit.
    script = f"""
import hearth, queue
frames = queue.SimpleQueue()
engine = hearth.Engine({json.dumps(OFFLINE)!r}, frames.put)
engine.send({INITIALIZE!r})
assert '"protocolVersion":1' in frames.get(timeout=10)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
