"""examples/python/ask.py, the example host, answers from the mock LLM as its README says."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO

EXAMPLE = REPO / "examples" / "python"


def test_the_example_host_prints_the_streamed_answer(agent_config, tmp_path):
    script = json.loads((EXAMPLE / "mock-script.json").read_text())
    base_url = agent_config(script["responses"])["providers"]["openai"]["baseUrl"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HEARTH_"))}
    env |= {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "unused"}
    run = subprocess.run(
        [sys.executable, str(EXAMPLE / "ask.py"), "What is Hearth?"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "Hearth is an ACP coding agent living in your editor.\n"
