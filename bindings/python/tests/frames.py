"""A thread-safe inbox for the frames an engine delivers, for the raw-frame tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any


class Inbox:
    """Use ``inbox.on_frame`` as the engine's callback; wait for frames with ``expect``."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        # The OS thread id each frame arrived on (Python may hand a foreign thread a new
        # Thread object on each call).
        self.threads: list[int] = []
        self._arrived = threading.Condition()

    def on_frame(self, frame: str) -> None:
        with self._arrived:
            self.frames.append(json.loads(frame))
            self.threads.append(threading.get_native_id())
            self._arrived.notify_all()

    def expect(self, matches: Callable[[dict[str, Any]], bool], timeout: float = 10.0) -> dict[str, Any]:
        """The first frame (delivered so far or later) that ``matches``."""
        with self._arrived:
            found = self._arrived.wait_for(lambda: next((f for f in self.frames if matches(f)), None), timeout)
        assert found is not None, f"no matching frame within {timeout}s; got {self.frames}"
        return found

    def response(self, request_id: int, timeout: float = 10.0) -> dict[str, Any]:
        return self.expect(lambda f: f.get("id") == request_id and "method" not in f, timeout)

    def chunks(self) -> str:
        """The text of every agent_message_chunk so far, joined."""
        with self._arrived:
            return "".join(
                f["params"]["update"]["content"]["text"]
                for f in self.frames
                if f.get("method") == "session/update"
                and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            )


def request(request_id: int, method: str, params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def prompt(request_id: int, session_id: str, text: str) -> str:
    return request(
        request_id, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    )
