// Tool calls behind a permission request: the model calls `write`, Hearth asks the client
// (`session/request_permission`, with the diff), and the official client's permission
// handler answers — allow once in the first turn, reject once in the second.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { contentText, toolResults } from "../lib/mock-llm.js";
import { hearthPath } from "../lib/paths.js";
import { Scenario } from "../lib/scenario.js";
import { ofKind, textOf, toolCallStatuses } from "../lib/updates.js";

const { agent: methods } = acp.methods;

/** The options Hearth offers for an edit inside the workspace: [optionId, kind], in order. */
const EDIT_OPTIONS = [
  ["allow_once", "allow_once"],
  ["allow_always", "allow_always"],
  ["reject_once", "reject_once"],
  ["reject_always", "reject_always"],
];

describe("tool calls with permission requests", () => {
  /** @type {Scenario} */ let scenario;
  /** @type {import("../lib/hearth.js").Hearth} */ let hearth;
  let fixture;
  let sessionId;

  before(async () => {
    scenario = await Scenario.start("permissions");
    fixture = scenario.fixture;
    hearth = await scenario.hearth();
    await hearth.initialize();
    ({ sessionId } = await hearth.agent.request(methods.session.new, { cwd: scenario.cwd, mcpServers: [] }));
  });
  after(() => scenario?.cleanup());

  /**
   * Runs one prompt whose model calls `write` once, answering the permission request with
   * `choice`. Returns what a test asserts on; the common checks are made here.
   * @param {number} promptIndex the prompt; its scripted responses are the call and the follow-up
   * @param {number} callResponse index of the scripted response holding the `write` call
   * @param {string} choice the option kind the client picks
   */
  async function writeTurn(promptIndex, callResponse, choice) {
    const [call] = fixture.toolCalls[callResponse];
    const file = path.join(scenario.project, call.arguments.path);
    const asked = hearth.permissions.requests.length;
    const mark = hearth.updates.mark();
    hearth.permissions.choose(choice);

    const response = await hearth.agent.request(methods.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: fixture.prompts[promptIndex] }],
    });
    assert.equal(response.stopReason, "end_turn");
    const turn = hearth.updates.of(sessionId, mark);

    // The announced call: pending, an edit of the file, the model's input, the diff.
    const starts = ofKind(turn, "tool_call");
    assert.equal(starts.length, 1, "one tool call announced");
    const [start] = starts;
    const expectedDiff = { type: "diff", path: hearthPath(file), oldText: null, newText: call.arguments.content };
    assert.equal(start.status, "pending");
    assert.equal(start.kind, "edit");
    assert.deepEqual(start.rawInput, call.arguments);
    assert.deepEqual(start.locations?.map((l) => l.path), [hearthPath(file)]);
    const startDiffs = (start.content ?? []).filter((c) => c.type === "diff");
    assert.deepEqual(startDiffs.map((d) => ({ ...d, oldText: d.oldText ?? null })), [expectedDiff]);

    // The permission request: about that call, the four options, the diff of a new file.
    const requests = hearth.permissions.requests.slice(asked);
    assert.equal(requests.length, 1, "one permission request");
    const [request] = requests;
    assert.equal(request.sessionId, sessionId);
    assert.equal(request.toolCall.toolCallId, start.toolCallId);
    assert.deepEqual(request.options.map((o) => [o.optionId, o.kind]), EDIT_OPTIONS);
    const diffs = (request.toolCall.content ?? []).filter((c) => c.type === "diff");
    assert.equal(diffs.length, 1, "the request carries the diff");
    assert.equal(diffs[0].oldText ?? null, null, "no old text: the file is new");
    assert.deepEqual({ ...diffs[0], oldText: null }, expectedDiff);

    // On the wire: announced, then asked, and only then (if at all) started.
    const frames = hearth.transcript.incoming().map((e) => e.frame);
    const where = (pred) => frames.findIndex((f) => f && pred(f));
    const announced = where((f) => f.params?.update?.sessionUpdate === "tool_call" && f.params.update.toolCallId === start.toolCallId);
    const askedAt = where((f) => f.method === "session/request_permission" && f.params?.toolCall?.toolCallId === start.toolCallId);
    const started = where((f) => f.params?.update?.toolCallId === start.toolCallId && f.params.update.status === "in_progress");
    assert.ok(announced >= 0 && askedAt > announced, "the permission request follows the tool_call");
    if (started >= 0) assert.ok(started > askedAt, "in_progress only after the answer");

    return { call, file, turn, start, statuses: toolCallStatuses(turn, start.toolCallId) };
  }

  it("a write approved once (allow_once) runs: file written, pending → in_progress → completed", async () => {
    const { call, file, turn, start, statuses } = await writeTurn(0, 0, "allow_once");
    assert.deepEqual(statuses, ["pending", "in_progress", "completed"]);
    const done = turn.findLast((u) => u.toolCallId === start.toolCallId && u.status === "completed");
    assert.ok(Array.isArray(done.content), "completed update carries content");
    assert.ok(existsSync(file), `${file} written`);
    assert.equal(readFileSync(file, "utf8"), call.arguments.content);
    assert.equal(textOf(turn, "agent_message_chunk"), fixture.answers[1]);

    const requests = await scenario.mock.requests();
    assert.equal(requests.length, 2, "the tool call, then the follow-up");
    const [result] = toolResults(requests[1], call.id);
    assert.ok(result, "the follow-up request carries the tool result");
    assert.doesNotMatch(contentText(result), /reject/i);
  });

  it("a write rejected once (reject_once) does not run: no file, failed, the model is told and follows up", async () => {
    const { call, file, turn, statuses } = await writeTurn(1, 2, "reject_once");
    assert.equal(statuses.at(-1), "failed", `final status failed, got ${statuses.join(" → ")}`);
    assert.ok(!statuses.includes("in_progress") && !statuses.includes("completed"), statuses.join(" → "));
    assert.ok(!existsSync(file), `${file} must not exist`);
    assert.equal(textOf(turn, "agent_message_chunk"), fixture.answers[3]);

    const requests = await scenario.mock.requests();
    assert.equal(requests.length, 4, "two per turn: the tool call, then the follow-up");
    const results = toolResults(requests[3], call.id);
    assert.equal(results.length, 1, "the follow-up request answers the rejected call");
    assert.match(contentText(results[0]), /rejected/i);
  });

  it("Hearth exits cleanly and every frame it wrote is valid ACP", () => scenario.stopAndValidate());
});
