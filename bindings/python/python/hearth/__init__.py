"""Hearth, an ACP coding agent embedded in this Python process.

``Engine(config, on_frame)`` starts the engine; ``send(frame)`` hands it one JSON-RPC frame
(text) from the client; every frame the agent sends back arrives through ``on_frame(frame)``
on the engine's delivery thread. ``close()`` (or leaving a ``with`` block) stops it.

For the official ACP SDK, use :class:`hearth.aio.EngineTransport`::

    conn = acp.connect_to_agent(client, hearth.aio.EngineTransport(config))
"""

from ._hearth import ClosedError, Engine, HearthError, __version__

__all__ = ["ClosedError", "Engine", "HearthError", "__version__"]
