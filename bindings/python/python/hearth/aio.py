"""asyncio glue: a message transport the official ACP Python SDK (``acp``) connects to.

::

    import acp, hearth.aio

    async def main():
        conn = acp.connect_to_agent(my_client, hearth.aio.EngineTransport(config))
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        ...
        await conn.close()  # closes the transport, and so the engine

The transport has the shape of the SDK's ``acp.Transport`` protocol (``send``, ``receive``,
``close`` over decoded JSON-RPC messages), so it works with any code written against it.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Mapping
from typing import Any

from ._hearth import Engine

__all__ = ["EngineTransport"]


class EngineTransport:
    """An in-process :class:`hearth.Engine` seen as a stream of JSON-RPC messages.

    Create it inside the event loop that will use it. Frames the engine delivers (on its
    own thread) are handed to that loop with ``call_soon_threadsafe`` and queued in order;
    ``receive`` takes them off the queue. After ``close`` has waited for the engine to stop,
    ``receive`` answers ``None`` (end of stream) once every frame delivered before it has
    been read.
    """

    def __init__(self, config: Mapping[str, Any] | str) -> None:
        loop = asyncio.get_running_loop()
        # ``None`` in the queue marks the end of the stream.
        self._frames: asyncio.Queue[str | None] = asyncio.Queue()
        self._end_queued = False
        self._end_read = False
        # The callback captures the loop and the queue, not ``self``: the engine keeps its
        # callback where the garbage collector can't see it, so a reference back to this
        # transport would keep both alive until close().
        self._engine = Engine(config, functools.partial(_hand_over, loop, self._frames))

    async def send(self, message: dict[str, Any]) -> None:
        """Send one message to the agent. Raises ``hearth.ClosedError`` after ``close``."""
        self._engine.send(json.dumps(message))

    async def receive(self) -> dict[str, Any] | None:
        """The agent's next message, or ``None`` once the transport is closed."""
        if self._end_read:
            return None
        frame = await self._frames.get()
        if frame is None:
            self._end_read = True
            return None
        message: dict[str, Any] = json.loads(frame)
        return message

    async def close(self) -> None:
        """Close the engine without blocking the event loop, then end the stream. Idempotent."""
        # Engine.close releases the GIL while it waits for the engine's threads, so another
        # thread can wait on it while this loop keeps serving.
        await asyncio.to_thread(self._engine.close)
        # Every frame the engine delivered was scheduled onto the loop before close returned,
        # so the end-of-stream marker lands after all of them.
        if not self._end_queued:
            self._end_queued = True
            self._frames.put_nowait(None)

    async def __aenter__(self) -> EngineTransport:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def _hand_over(loop: asyncio.AbstractEventLoop, frames: asyncio.Queue[str | None], frame: str) -> None:
    """The engine's ``on_frame``: runs on the delivery thread, hands the frame to the loop."""
    try:
        loop.call_soon_threadsafe(frames.put_nowait, frame)
    except RuntimeError:
        # The loop is closed: no one is left to read the frame.
        pass
