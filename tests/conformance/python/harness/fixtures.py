"""The scenario data shared with the TypeScript suite: prompts, the mock's script, and what
the script makes the agent stream (derived from the script, so it is written once)."""

from __future__ import annotations

import json
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


@dataclass(frozen=True)
class Fixture:
    prompts: list[str]
    script: dict[str, Any]
    #: The answer text of each scripted response.
    answers: list[str]
    #: The reasoning text of each scripted response.
    thoughts: list[str]
    #: What each response streams before its first stall.
    before_stall: list[str]


def load_fixture(name: str) -> Fixture:
    """``name``: a file in tests/conformance/fixtures without ``.json``."""
    data = json.loads((FIXTURES_DIR / f"{name}.json").read_text())
    responses = data["script"]["responses"]
    return Fixture(
        prompts=data["prompts"],
        script=data["script"],
        answers=[_scripted(r, "text") for r in responses],
        thoughts=[_scripted(r, "reasoning") for r in responses],
        before_stall=[_scripted(r, "text", until_stall=True) for r in responses],
    )
