"""Type stubs for the native module ``hearth._hearth`` (re-exported by ``hearth``)."""

from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Literal, final

from typing_extensions import Self

__all__ = ["Engine", "HearthError", "ClosedError", "__version__"]

__version__: str

class HearthError(Exception):
    """An engine call failed (store can't be opened, close() inside on_frame, use after fork...)."""

class ClosedError(HearthError):
    """The engine is closed; create a new one."""

@final
class Engine:
    """A running Hearth engine: ACP JSON-RPC frames in through ``send``, out through ``on_frame``.

    ``config`` is the configuration object (a mapping, or its JSON text; ``""`` = defaults).
    An invalid config raises ``ValueError`` naming the key.

    ``on_frame(frame)`` gets every frame one at a time, in order: on the engine's delivery
    thread, or — for the answer to a request served at once with nothing queued ahead of it —
    on the thread calling ``send``, inside that call. It may call ``send`` on this engine or
    another (that answer is then queued, never delivered inside the running ``on_frame``); it
    must not call ``close``. An exception it raises is reported through
    ``sys.unraisablehook`` and delivery goes on.

    The engine holds ``on_frame`` where Python's garbage collector can't see it: close the
    engine (or use ``with``) rather than relying on collection when ``on_frame`` refers back
    to the engine.
    """

    def __new__(cls, config: Mapping[str, Any] | str, on_frame: Callable[[str], object]) -> Self: ...
    def send(self, frame: str) -> None:
        """Hand the engine one client → agent frame. Never blocks.

        An answer the engine makes at once may reach ``on_frame`` on this thread before this
        returns.

        Raises ``ClosedError`` after ``close``, ``HearthError`` in a forked child.
        """
    def close(self) -> None:
        """Stop the engine: cancel turns, flush the store, join threads. Idempotent.

        Releases the GIL while waiting. After it returns ``on_frame`` is never called again.
        Raises ``HearthError`` when called from inside ``on_frame`` or in a forked child.
        """
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Literal[False]: ...
