// session/cancel while the model is mid-stream: the prompt ends with `cancelled` long
// before the stalled stream would have, and the session stays usable.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { Scenario } from "../lib/scenario.js";
import { ofKind, textOf } from "../lib/updates.js";

const { agent: methods } = acp.methods;

/** Far below the script's 30 s stall: an answer within this proves the cancel worked. */
const CANCEL_DEADLINE_MS = 10_000;

function deadline(ms, what) {
  let timer;
  const promise = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return { promise, clear: () => clearTimeout(timer) };
}

describe("cancel", () => {
  /** @type {Scenario} */ let scenario;
  /** @type {import("../lib/hearth.js").Hearth} */ let hearth;
  let sessionId;

  before(async () => {
    scenario = await Scenario.start("cancel");
    hearth = await scenario.hearth();
    await hearth.initialize();
    ({ sessionId } = await hearth.agent.request(methods.session.new, { cwd: scenario.cwd, mcpServers: [] }));
  });
  after(() => scenario?.cleanup());

  it("session/cancel mid-stream ends the prompt with stopReason cancelled", async () => {
    const { fixture } = scenario;
    const mark = hearth.updates.mark();
    const turn = hearth.agent.request(methods.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: fixture.prompts[0] }],
    });
    // The text before the stall has arrived: the model stream is open and stalled.
    const streaming = (u) => u.sessionUpdate === "agent_message_chunk";
    await hearth.updates.waitFor(sessionId, streaming, CANCEL_DEADLINE_MS);

    await hearth.agent.notify(methods.session.cancel, { sessionId });
    const timeout = deadline(CANCEL_DEADLINE_MS, "the cancelled prompt");
    const response = await Promise.race([turn, timeout.promise]).finally(timeout.clear);
    assert.equal(response.stopReason, "cancelled");
    assert.equal(textOf(hearth.updates.of(sessionId, mark), "agent_message_chunk"), fixture.beforeStall[0]);
  });

  it("the session answers the next prompt normally", async () => {
    const { fixture } = scenario;
    const mark = hearth.updates.mark();
    const response = await hearth.agent.request(methods.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: fixture.prompts[1] }],
    });
    assert.equal(response.stopReason, "end_turn");
    const turn = hearth.updates.of(sessionId, mark);
    assert.equal(textOf(turn, "agent_message_chunk"), fixture.answers[1]);
    assert.equal(ofKind(turn, "session_info_update").length, 0);
  });

  it("Hearth exits cleanly and every frame it wrote is valid ACP", () => scenario.stopAndValidate());
});
