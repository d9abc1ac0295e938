"""The scripted mock LLM (tests/mock-llm) as a child process."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .paths import binary


def content_text(message: dict[str, Any]) -> str:
    """The text of an OpenAI chat message, whether its content is a string or parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [])


def tool_results(request: dict[str, Any], call_id: str) -> list[dict[str, Any]]:
    """The ``tool`` messages of a recorded model request answering the call with this id."""
    return [m for m in request["body"]["messages"] if m.get("role") == "tool" and m.get("tool_call_id") == call_id]


class MockLlm:
    def __init__(self, process: asyncio.subprocess.Process, base_url: str) -> None:
        self._process = process
        #: e.g. http://127.0.0.1:41234/v1: what the agent's provider points at
        self.base_url = base_url
        parts = urlsplit(base_url)
        self.origin = f"{parts.scheme}://{parts.netloc}"

    @classmethod
    async def start(cls, script: dict[str, Any], directory: Path) -> MockLlm:
        """Starts the mock with a script and waits for the one line it prints: its base URL."""
        script_file = directory / "mock-script.json"
        script_file.write_text(json.dumps(script))
        # stdin stays a pipe: the mock serves until it closes, so a dying test never leaks it.
        process = await asyncio.create_subprocess_exec(
            str(binary("hearth-mock-llm")),
            "--script",
            str(script_file),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert process.stdout is not None
        base_url = (await process.stdout.readline()).decode().strip()
        if not base_url:
            await process.wait()
            raise RuntimeError(f"hearth-mock-llm exited ({process.returncode}) before printing its URL")
        return cls(process, base_url)

    async def requests(self) -> list[dict[str, Any]]:
        """Every model request so far: ``[{method, path, headers, body}]``, oldest first."""

        def fetch() -> list[dict[str, Any]]:
            with urllib.request.urlopen(f"{self.origin}/_mock/requests", timeout=10) as response:
                return json.load(response)

        return await asyncio.to_thread(fetch)

    async def stop(self) -> None:
        if self._process.returncode is not None:
            return
        assert self._process.stdin is not None
        self._process.stdin.close()
        await self._process.wait()
