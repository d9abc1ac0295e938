"""``session/update`` notifications as the official client delivered them, in arrival order,
and the small folds the tests assert on. Updates are kept as the camelCase JSON the SDK's
models dump to, so the folds read like the protocol (and like the TypeScript suite's)."""

from __future__ import annotations

import asyncio
from typing import Any

Update = dict[str, Any]

_MESSAGE_KINDS = ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")


class UpdateLog:
    def __init__(self) -> None:
        self.all: list[tuple[str, Update]] = []
        self._changed = asyncio.Event()

    def push(self, session_id: str, update: Update) -> None:
        self.all.append((session_id, update))
        self._changed.set()

    def mark(self) -> int:
        """A mark to pass as ``start`` later: "updates after this point"."""
        return len(self.all)

    def of(self, session_id: str, start: int = 0) -> list[Update]:
        """Updates of one session, from index ``start`` of the log on."""
        return [u for sid, u in self.all[start:] if sid == session_id]

    async def wait_for(self, session_id: str, predicate: Any, timeout: float) -> None:
        """Returns once some update of the session satisfies ``predicate``."""

        async def poll() -> None:
            while not any(predicate(u) for u in self.of(session_id)):
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(poll(), timeout)


def history(updates: list[Update]) -> list[Update]:
    """The updates that are part of the conversation: all but the command list, which is
    state (sent after each session response and whenever it changes, never replayed)."""
    return [u for u in updates if u.get("sessionUpdate") != "available_commands_update"]


def of_kind(updates: list[Update], kind: str) -> list[Update]:
    """Updates of one kind (``sessionUpdate`` value)."""
    return [u for u in updates if u.get("sessionUpdate") == kind]


def _text(update: Update) -> str:
    content = update.get("content") or {}
    return content.get("text", "") if content.get("type") == "text" else ""


def text_of(updates: list[Update], kind: str) -> str:
    """The concatenated text of the chunks of one kind."""
    return "".join(_text(u) for u in of_kind(updates, kind))


def messages(updates: list[Update]) -> list[tuple[str, str]]:
    """Message chunks folded into ``(kind, text)`` messages.

    Consecutive chunks of one kind and messageId form one message; other updates are
    skipped. This is how a client rebuilds a conversation from a replay.
    """
    folded: list[list[Any]] = []
    for u in updates:
        if u.get("sessionUpdate") not in _MESSAGE_KINDS:
            continue
        key = (u["sessionUpdate"], u.get("messageId"))
        if folded and folded[-1][0] == key:
            folded[-1][1] += _text(u)
        else:
            folded.append([key, _text(u)])
    return [(kind, text) for (kind, _), text in folded]


def tool_call_updates(updates: list[Update], tool_call_id: str) -> list[Update]:
    """The ``tool_call`` and ``tool_call_update``s of one tool call, in order."""
    kinds = ("tool_call", "tool_call_update")
    return [u for u in updates if u.get("sessionUpdate") in kinds and u.get("toolCallId") == tool_call_id]


def tool_call_statuses(updates: list[Update], tool_call_id: str) -> list[str]:
    """The statuses one tool call went through, in order (updates without a status skipped)."""
    return [u["status"] for u in tool_call_updates(updates, tool_call_id) if u.get("status") is not None]
