"""The scenario data shared with the TypeScript suite: prompts, the mock's script, extra
Hearth config, and what the script makes the agent stream and call (derived from the
script, so it is written once)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .paths import FIXTURES_DIR


def _scripted(response: dict[str, Any], key: str, *, until_stall: bool = False) -> str:
    """Concatenated values of one event key (``text``, ``reasoning``) of a scripted response."""
    out = ""
    for event in response.get("events", []):
        if until_stall and "stallMs" in event:
            break
        out += event.get(key, "")
    return out


def _scripted_calls(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool calls of a scripted response: ``{id, name, arguments}`` with the arguments parsed."""
    calls = [event["toolCall"] for event in response.get("events", []) if "toolCall" in event]
    return [{"id": c["id"], "name": c["name"], "arguments": json.loads(c["arguments"])} for c in calls]


def _substitute(value: Any, variables: dict[str, str]) -> Any:
    """``value`` with every ``{{name}}`` in its strings replaced; an unknown name raises."""
    if isinstance(value, str):

        def replace(match: re.Match[str]) -> str:
            if match[1] not in variables:
                raise KeyError(f"fixture placeholder {{{{{match[1]}}}}} has no value")
            return variables[match[1]]

        return re.sub(r"\{\{(\w+)\}\}", replace, value)
    if isinstance(value, list):
        return [_substitute(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: _substitute(item, variables) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class Fixture:
    prompts: list[str]
    script: dict[str, Any]
    #: Extra keys for Hearth's config file (e.g. ``permissionMode``).
    config: dict[str, Any]
    #: ACP ``mcpServers`` entries (camelCase JSON) for the scenario's sessions.
    mcp_servers: list[dict[str, Any]]
    #: The answer text of each scripted response.
    answers: list[str]
    #: The reasoning text of each scripted response.
    thoughts: list[str]
    #: What each response streams before its first stall.
    before_stall: list[str]
    #: The tool calls of each scripted response.
    tool_calls: list[list[dict[str, Any]]]


def load_fixture(name: str, variables: dict[str, str] | None = None) -> Fixture:
    """``name``: a file in tests/conformance/fixtures without ``.json``; ``variables``: values
    for its ``{{name}}`` placeholders."""
    data = _substitute(json.loads((FIXTURES_DIR / f"{name}.json").read_text()), variables or {})
    responses = data["script"]["responses"]
    return Fixture(
        prompts=data["prompts"],
        script=data["script"],
        config=data.get("config", {}),
        mcp_servers=data.get("mcpServers", []),
        answers=[_scripted(r, "text") for r in responses],
        thoughts=[_scripted(r, "reasoning") for r in responses],
        before_stall=[_scripted(r, "text", until_stall=True) for r in responses],
        tool_calls=[_scripted_calls(r) for r in responses],
    )
