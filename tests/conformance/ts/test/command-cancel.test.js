// session/cancel while a `run_command` runs a live process tree: the prompt answers
// `cancelled` promptly, no process of the tree survives, the tool call ends `failed`, and
// the session (and the model's conversation) stays usable.

import assert from "node:assert/strict";
import { randomInt } from "node:crypto";
import { copyFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { toolResults } from "../lib/mock-llm.js";
import { windowsHearth } from "../lib/paths.js";
import { pollProcesses, processesMatching } from "../lib/processes.js";
import { Scenario } from "../lib/scenario.js";
import { ofKind, textOf, toolCallStatuses } from "../lib/updates.js";

const { agent: methods } = acp.methods;

/** Far below the command's 30 s: an answer within this proves the cancel worked. */
const CANCEL_DEADLINE_MS = 10_000;
/** How long the command may take to start its processes. */
const START_TIMEOUT_MS = 10_000;
/** Grace for the kernel to tear down killed processes after the answer. */
const REAP_GRACE_MS = 1_000;

/** tests/cross/spawn-tree.exe, as tests/cross/windows.sh built it. */
function spawnTree() {
  const file = process.env.HEARTH_SPAWN_TREE;
  if (!file) throw new Error("HEARTH_SPAWN_TREE is not set: run a Windows Hearth through tests/cross/windows.sh");
  return file;
}

function deadline(ms, what) {
  let timer;
  const promise = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return { promise, clear: () => clearTimeout(timer) };
}

describe("cancel during a running command", () => {
  /** @type {Scenario} */ let scenario;
  /** @type {import("../lib/hearth.js").Hearth} */ let hearth;
  let sessionId;
  /** Unique digits in every command line of the tree (`sleep 30.<marker>`). */
  const marker = String(randomInt(100_000_000, 1_000_000_000));
  const pattern = `30\\.${marker}`;
  /**
   * The tree per OS: its fixture, the line it prints once started, and its two processes below
   * the first (the leaves). A Windows Hearth's shell is cmd/PowerShell, so its tree is
   * tests/cross/spawn-tree.exe (`HEARTH_SPAWN_TREE`, built by tests/cross/windows.sh), copied
   * into the project dir; wine shows its processes' command lines in /proc, so pgrep finds them.
   */
  const tree = windowsHearth
    ? { fixture: "command-cancel-windows", started: `spawn-tree 2 30.${marker} started`, leaves: `spawn-tree\\.exe [01] ${pattern}` }
    : { fixture: "command-cancel", started: `build-${marker} started`, leaves: `^sleep ${pattern}` };

  before(async () => {
    assert.deepEqual(processesMatching(pattern), [], "no process with the marker before the test");
    scenario = await Scenario.start(tree.fixture, { marker });
    if (windowsHearth) copyFileSync(spawnTree(), path.join(scenario.project, "spawn-tree.exe"));
    hearth = await scenario.hearth();
    await hearth.initialize();
    ({ sessionId } = await hearth.agent.request(methods.session.new, { cwd: scenario.cwd, mcpServers: [] }));
  });
  after(() => scenario?.cleanup());

  it("session/cancel kills the process tree, fails the tool call and ends the prompt cancelled", async () => {
    const { fixture } = scenario;
    const mark = hearth.updates.mark();
    const turn = hearth.agent.request(methods.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: fixture.prompts[0] }],
    });
    turn.catch(() => {}); // awaited below; a rejection before that must not go unhandled

    const running = (u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress";
    await hearth.updates.waitFor(sessionId, running, START_TIMEOUT_MS);
    const printed = (u) => u._meta?.terminal_output?.data?.includes(tree.started);
    await hearth.updates.waitFor(sessionId, printed, START_TIMEOUT_MS);
    // Both leaves (one a grandchild of the command) are up: a real tree to kill.
    const leaves = await pollProcesses(tree.leaves, (found) => found.length >= 2, START_TIMEOUT_MS);
    assert.equal(leaves.length, 2, `both leaves run:\n${processesMatching(pattern).join("\n")}`);

    await hearth.agent.notify(methods.session.cancel, { sessionId });
    const timeout = deadline(CANCEL_DEADLINE_MS, "the cancelled prompt");
    const response = await Promise.race([turn, timeout.promise]).finally(timeout.clear);
    assert.equal(response.stopReason, "cancelled");

    const left = await pollProcesses(pattern, (found) => found.length === 0, REAP_GRACE_MS);
    assert.deepEqual(left, [], "no process of the command's tree survives the cancel");

    const updates = hearth.updates.of(sessionId, mark);
    const [start] = ofKind(updates, "tool_call");
    assert.ok(start, "the command was announced as a tool call");
    assert.equal(start.kind, "execute");
    const statuses = toolCallStatuses(updates, start.toolCallId);
    assert.equal(statuses.at(-1), "failed", `final status failed, got ${statuses.join(" → ")}`);

    // Live output came as `_meta.terminal_output` deltas of this tool call.
    const deltas = updates.filter((u) => u.toolCallId === start.toolCallId && u._meta?.terminal_output);
    assert.ok(deltas.every((u) => u._meta.terminal_output.terminal_id === start.toolCallId));
    assert.ok(deltas.map((u) => u._meta.terminal_output.data).join("").includes(tree.started));

    // On the wire, the final status precedes the prompt's answer.
    const { transcript } = hearth;
    const answer = transcript.responseTo(transcript.lastRequest(methods.session.prompt, sessionId));
    const before = transcript.updatesBetween(sessionId, { seq: -1 }, answer);
    assert.equal(toolCallStatuses(before, start.toolCallId).at(-1), "failed", "failed is sent before the prompt answers");
  });

  it("the next prompt works and the model gets a result for the cancelled call", async () => {
    const { fixture } = scenario;
    const mark = hearth.updates.mark();
    const response = await hearth.agent.request(methods.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: fixture.prompts[1] }],
    });
    assert.equal(response.stopReason, "end_turn");
    assert.equal(textOf(hearth.updates.of(sessionId, mark), "agent_message_chunk"), fixture.answers[1]);

    const requests = await scenario.mock.requests();
    assert.equal(requests.length, 2, "no model request between the cancel and the next prompt");
    const [call] = fixture.toolCalls[0];
    assert.equal(toolResults(requests[1], call.id).length, 1, "the cancelled call has its tool result");
  });

  it("Hearth exits cleanly and every frame it wrote is valid ACP", () => scenario.stopAndValidate());
});
