"""One ``hearth acp`` child process driven by the official ACP Python client."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import acp
from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation, InitializeResponse

from .paths import hearth_command, hearth_path, wrapper_environment
from .permissions import PermissionDesk
from .transcript import RecordingTransport, Transcript
from .updates import UpdateLog

#: The model name the config sets; the mock records it in every request.
MODEL = "conformance-model"
#: The provider key the config sets; the mock records it as a bearer token.
API_KEY = "conformance-key"

#: Far above any frame these tests make; the reader's default (64 KiB) is not.
_LINE_LIMIT = 32 * 1024 * 1024


class RecordingClient:
    """The client the SDK dispatches to: ``session/update`` and ``session/request_permission``.
    Hearth is told the client has no fs or terminal, so nothing else arrives."""

    def __init__(self, updates: UpdateLog, permissions: PermissionDesk) -> None:
        self._updates = updates
        self._permissions = permissions

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self._updates.push(session_id, update.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        return self._permissions.answer(session_id, tool_call, options)


def _write_config(path: Path, data_dir: Path, base_url: str, extra: dict[str, Any]) -> None:
    """``extra``: scenario-specific keys from the fixture (e.g. ``permissionMode``)."""
    config = {"dataDir": hearth_path(data_dir), "model": MODEL, "providers": {"openai": {"baseUrl": base_url, "apiKey": API_KEY}}}
    path.write_text(json.dumps({**config, **extra}, indent=2))


class Hearth:
    """Use :meth:`launch`. ``conn`` is the official ``ClientSideConnection``."""

    def __init__(self, stack: contextlib.AsyncExitStack, process: Any, transcript: Transcript,
                 updates: UpdateLog, permissions: PermissionDesk, conn: Any, stderr_path: Path) -> None:
        self._stack = stack
        self.process = process
        self.transcript = transcript
        self.updates = updates
        #: Answers Hearth's ``session/request_permission`` requests as the test queued.
        self.permissions = permissions
        self.conn = conn
        #: Hearth's logs, for diagnosing a failure.
        self.stderr_path = stderr_path
        #: Set by kill(): a killed Hearth owes no clean exit.
        self.killed = False

    @classmethod
    async def launch(
        cls, work_dir: Path, data_dir: Path, base_url: str, label: str, config: dict[str, Any] | None = None
    ) -> Hearth:
        """Starts ``hearth acp`` with a config pointing at the mock and a data dir (plus the
        ``config`` keys given), and connects the official client through a transport that
        records every byte.

        ``acp.spawn_stdio_transport`` starts it with the SDK's trimmed environment (plus a
        wrapper's own settings, ``paths.wrapper_environment``), so no provider variable of the
        caller's leaks in: the config file is the only source.
        """
        config_file = work_dir / f"hearth-{label}.json"
        _write_config(config_file, data_dir, base_url, config or {})
        stderr_path = work_dir / f"hearth-{label}.stderr.log"
        stack = contextlib.AsyncExitStack()
        with stderr_path.open("wb") as stderr:
            reader, writer, process = await stack.enter_async_context(
                acp.spawn_stdio_transport(
                    *hearth_command(),
                    "acp",
                    "--config",
                    hearth_path(config_file),
                    env=wrapper_environment(),
                    stderr=stderr.fileno(),
                    limit=_LINE_LIMIT,
                )
            )
        transcript, updates, permissions = Transcript(), UpdateLog(), PermissionDesk()
        client = RecordingClient(updates, permissions)
        conn = acp.connect_to_agent(client, RecordingTransport(reader, writer, transcript))
        return cls(stack, process, transcript, updates, permissions, conn, stderr_path)

    async def initialize(self) -> InitializeResponse:
        """``initialize`` as a client without fs or terminal support."""
        return await self.conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=False, write_text_file=False), terminal=False
            ),
            client_info=Implementation(name="hearth-conformance-py", version="0.0.0"),
        )

    async def delete_session(self, session_id: str) -> Any:
        """``session/delete``. SDK 0.12.1's client has no method for it (the method is in
        ``acp.meta.AGENT_METHODS``), so it goes through the connection's own JSON-RPC layer."""
        return await self.conn._conn.send_request(acp.AGENT_METHODS["session_delete"], {"sessionId": session_id})

    async def set_session_title(self, session_id: str, title: str) -> Any:
        """``session/set_title`` (unstable). SDK 0.12.1 knows neither the method nor its types,
        so it goes through the connection's own JSON-RPC layer, as ``delete_session`` does."""
        return await self.conn._conn.send_request("session/set_title", {"sessionId": session_id, "title": title})

    async def stop(self) -> int | None:
        """Closes the client and Hearth's stdin; Hearth must exit on its own. Its exit code."""
        await self.conn.close()
        await self._stack.aclose()
        return self.process.returncode

    async def kill(self) -> int | None:
        """Kills Hearth without warning (SIGKILL), as a crash or a power cut would."""
        self.killed = True
        self.process.kill()
        await self.process.wait()
        await self.stop()
        return self.process.returncode
