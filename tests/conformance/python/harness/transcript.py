"""The exact bytes exchanged with the agent, split into lines, in the order they passed.

The official SDK parses (and skips what it cannot parse) when it reads, so the client is
connected through :class:`RecordingTransport`, an ``acp`` message transport over the
agent's stdio that records every line *before* decoding it: validation and ordering checks
see what Hearth actually wrote, not what the SDK made of it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from .schema import AcpSchema, FrameSchemas

_MISSING = object()


@dataclass
class Entry:
    seq: int
    direction: str  # "in": agent -> client, "out": client -> agent
    line: str
    frame: Any = _MISSING
    problem: str | None = None

    @property
    def parsed(self) -> bool:
        return self.frame is not _MISSING

    def get(self, key: str) -> Any:
        return self.frame.get(key) if self.parsed and isinstance(self.frame, dict) else None


class Transcript:
    def __init__(self) -> None:
        self.entries: list[Entry] = []
        #: JSON of a request id the client sent -> its method
        self.sent_methods: dict[str, str] = {}

    def record(self, direction: str, data: bytes, problem: str | None = None) -> Entry:
        entry = Entry(seq=len(self.entries), direction=direction, line=data.decode("latin-1"))
        try:
            entry.line = data.decode("utf-8")
            entry.frame = json.loads(entry.line)
        except ValueError as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            problem = problem or f"not a JSON frame: {e}"
        entry.problem = problem
        if direction == "out" and entry.get("method") is not None and "id" in entry.frame:
            self.sent_methods[json.dumps(entry.frame["id"])] = entry.frame["method"]
        self.entries.append(entry)
        return entry

    def incoming(self) -> list[Entry]:
        """The agent's frames."""
        return [e for e in self.entries if e.direction == "in"]

    def last_request(self, method: str, session_id: str | None = None) -> Entry | None:
        """The last request the client sent with this method (and session id, if given)."""
        for entry in reversed(self.entries):
            if entry.direction != "out" or entry.get("method") != method or "id" not in entry.frame:
                continue
            if session_id is None or (entry.frame.get("params") or {}).get("sessionId") == session_id:
                return entry
        return None

    def response_to(self, request: Entry) -> Entry | None:
        """The agent's answer to a request entry."""
        wanted = json.dumps(request.frame["id"])
        for entry in self.entries[request.seq + 1 :]:
            if entry.direction == "in" and entry.get("method") is None and json.dumps(entry.get("id")) == wanted:
                return entry
        return None

    def updates_between(self, session_id: str, start: Entry, end: Entry | None = None) -> list[dict[str, Any]]:
        """``session/update`` payloads for one session the agent wrote strictly between two entries."""
        stop = end.seq if end is not None else len(self.entries)
        updates = []
        for entry in self.entries[start.seq + 1 : stop]:
            if entry.direction != "in" or entry.get("method") != "session/update":
                continue
            params = entry.frame.get("params") or {}
            if params.get("sessionId") == session_id:
                updates.append(params.get("update"))
        return updates

    def schema_problems(self, schema: AcpSchema | FrameSchemas) -> list[str]:
        """Every schema problem in what the agent wrote, one string per bad line."""

        def method_of(request_id: Any) -> str | None:
            return self.sent_methods.get(json.dumps(request_id))

        problems = []
        for entry in self.incoming():
            found = [entry.problem] if entry.problem else schema.problems(entry.frame, method_of)
            if found:
                problems.append(f"{'; '.join(found)}\n    in: {entry.line}")
        return problems


class RecordingTransport:
    """An ``acp`` message transport over the agent's stdin/stdout that records every byte.

    Duck-types ``acp.Transport`` (``send``, ``receive``, ``close``), the seam the SDK's own
    stdio transport is built on; framing is the same newline-delimited JSON.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, transcript: Transcript) -> None:
        self._reader = reader
        self._writer = writer
        self._transcript = transcript

    async def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":")).encode()
        self._transcript.record("out", data)
        self._writer.write(data + b"\n")
        await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as eof:
                if eof.partial:
                    self._transcript.record("in", eof.partial, "line not terminated by \\n at end of stream")
                return None
            entry = self._transcript.record("in", line[:-1])
            # Like the SDK's own transport, skip what is not a JSON object; the transcript
            # keeps it as a schema problem.
            if entry.parsed and isinstance(entry.frame, dict):
                return entry.frame

    async def close(self) -> None:
        if not self._writer.is_closing():
            self._writer.close()
