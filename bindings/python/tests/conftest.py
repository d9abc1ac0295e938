"""Shared fixtures: the scripted mock LLM (the only model any test talks to) and configs."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]

Responses = list[dict[str, Any]]


def mock_llm_binary() -> Path:
    """``target/debug/hearth-mock-llm``, honouring ``CARGO_TARGET_DIR`` the way cargo does."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", "target"))
    if not target.is_absolute():
        target = REPO / target
    return target / "debug" / "hearth-mock-llm"


@pytest.fixture
def agent_config(tmp_path: Path) -> Iterator[Callable[[Responses], dict[str, Any]]]:
    """``agent_config(responses)`` starts a mock LLM that answers the model requests with
    ``responses`` in order, and returns an engine config pointing at it (in-memory store)."""
    binary = mock_llm_binary()
    if not binary.is_file():
        pytest.fail(
            f"the mock LLM is missing at {binary}: build it first with `cargo build -p hearth-mock-llm`",
            pytrace=False,
        )
    started: list[subprocess.Popen[str]] = []

    def start(responses: Responses) -> dict[str, Any]:
        script = tmp_path / f"script-{len(started)}.json"
        script.write_text(json.dumps({"responses": responses}))
        # The mock serves until its stdin closes, so a crashed test run never leaves it behind.
        proc = subprocess.Popen(
            [str(binary), "--script", str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        started.append(proc)
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:"), f"unexpected first line from the mock: {base_url!r}"
        return {
            "dataDir": ":memory:",
            "model": "test-model",
            "providers": {"openai": {"baseUrl": base_url, "apiKey": "test-key"}},
        }

    yield start
    for proc in started:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.stdout.close()
        proc.wait(timeout=10)
