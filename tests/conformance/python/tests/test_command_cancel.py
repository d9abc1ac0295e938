"""session/cancel while a ``run_command`` runs a live process tree: the prompt answers
``cancelled`` promptly, no process of the tree survives, the tool call ends ``failed``, and
the session (and the model's conversation) stays usable."""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil

import pytest
from acp.schema import TextContentBlock

from harness.mock_llm import tool_results
from harness.paths import WINDOWS_HEARTH
from harness.processes import poll_processes, processes_matching
from harness.updates import of_kind, text_of, tool_call_statuses

#: Unique digits in every command line of the tree (``sleep 30.<marker>``).
MARKER = str(100_000_000 + secrets.randbelow(900_000_000))
FIXTURE_VARS = {"marker": MARKER}
PATTERN = rf"30\.{MARKER}"
#: The tree per OS: its fixture, the line it prints once started, and its two processes below
#: the first (the leaves). A Windows Hearth's shell is cmd/PowerShell, so its tree is
#: tests/cross/spawn-tree.exe (``HEARTH_SPAWN_TREE``, built by tests/cross/windows.sh), copied
#: into the project dir; wine shows its processes' command lines in /proc, so pgrep finds them.
if WINDOWS_HEARTH:
    FIXTURE, STARTED, LEAVES = "command-cancel-windows", f"spawn-tree 2 30.{MARKER} started", rf"spawn-tree\.exe [01] {PATTERN}"
else:
    FIXTURE, STARTED, LEAVES = "command-cancel", f"build-{MARKER} started", f"^sleep {PATTERN}"
pytestmark = pytest.mark.asyncio(loop_scope="module")

#: Far below the command's 30 s: an answer within this proves the cancel worked.
CANCEL_DEADLINE_S = 10
#: How long the command may take to start its processes.
START_TIMEOUT_S = 10
#: Grace for the kernel to tear down killed processes after the answer.
REAP_GRACE_S = 1


def spawn_tree() -> str:
    """tests/cross/spawn-tree.exe, as tests/cross/windows.sh built it."""
    file = os.environ.get("HEARTH_SPAWN_TREE")
    assert file, "HEARTH_SPAWN_TREE is not set: run a Windows Hearth through tests/cross/windows.sh"
    return file


def text_prompt(text: str) -> list[TextContentBlock]:
    return [TextContentBlock(type="text", text=text)]


async def test_cancel_kills_the_tree_fails_the_tool_call_and_ends_the_prompt_cancelled(story):
    assert processes_matching(PATTERN) == [], "no process with the marker before the test"
    if WINDOWS_HEARTH:
        shutil.copy(spawn_tree(), story.scenario.project / "spawn-tree.exe")
    story.hearth = hearth = await story.scenario.hearth()
    await hearth.initialize()
    story.session_id = sid = (await hearth.conn.new_session(cwd=story.scenario.cwd, mcp_servers=[])).session_id

    mark = hearth.updates.mark()
    turn = asyncio.create_task(hearth.conn.prompt(session_id=sid, prompt=text_prompt(story.fixture.prompts[0])))

    def running(u):
        return u["sessionUpdate"] == "tool_call_update" and u.get("status") == "in_progress"

    def printed(u):
        return STARTED in ((u.get("_meta") or {}).get("terminal_output") or {}).get("data", "")

    await hearth.updates.wait_for(sid, running, START_TIMEOUT_S)
    await hearth.updates.wait_for(sid, printed, START_TIMEOUT_S)
    # Both leaves (one a grandchild of the command) are up: a real tree to kill.
    leaves = await poll_processes(LEAVES, lambda found: len(found) >= 2, START_TIMEOUT_S)
    assert len(leaves) == 2, "both leaves run:\n" + "\n".join(processes_matching(PATTERN))

    await hearth.conn.cancel(session_id=sid)
    response = await asyncio.wait_for(turn, CANCEL_DEADLINE_S)
    assert response.stop_reason == "cancelled"

    left = await poll_processes(PATTERN, lambda found: not found, REAP_GRACE_S)
    assert left == [], "no process of the command's tree survives the cancel"

    updates = hearth.updates.of(sid, mark)
    starts = of_kind(updates, "tool_call")
    assert starts, "the command was announced as a tool call"
    start = starts[0]
    assert start["kind"] == "execute"
    statuses = tool_call_statuses(updates, start["toolCallId"])
    assert statuses[-1] == "failed", f"final status failed, got {' → '.join(statuses)}"

    # Live output came as `_meta.terminal_output` deltas of this tool call.
    outputs = [
        u["_meta"]["terminal_output"]
        for u in updates
        if u.get("toolCallId") == start["toolCallId"] and (u.get("_meta") or {}).get("terminal_output")
    ]
    assert all(o["terminal_id"] == start["toolCallId"] for o in outputs)
    assert STARTED in "".join(o["data"] for o in outputs)

    # On the wire, the final status precedes the prompt's answer.
    transcript = hearth.transcript
    answer = transcript.response_to(transcript.last_request("session/prompt", sid))
    before = transcript.updates_between(sid, transcript.entries[0], answer)
    assert tool_call_statuses(before, start["toolCallId"])[-1] == "failed", "failed is sent before the prompt answers"


async def test_the_next_prompt_works_and_the_model_gets_a_result_for_the_cancelled_call(story):
    hearth, sid, fixture = story.hearth, story.session_id, story.fixture
    mark = hearth.updates.mark()
    response = await hearth.conn.prompt(session_id=sid, prompt=text_prompt(fixture.prompts[1]))
    assert response.stop_reason == "end_turn"
    assert text_of(hearth.updates.of(sid, mark), "agent_message_chunk") == fixture.answers[1]

    requests = await story.scenario.mock.requests()
    assert len(requests) == 2, "no model request between the cancel and the next prompt"
    [call] = fixture.tool_calls[0]
    assert len(tool_results(requests[1], call["id"])) == 1, "the cancelled call has its tool result"


async def test_hearth_exits_cleanly_and_every_frame_is_valid_acp(story):
    await story.scenario.stop_and_validate()
