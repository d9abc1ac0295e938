// Durability: a session survives its Hearth being killed (SIGKILL, no shutdown), and a new
// Hearth on the same data dir lists it and replays it.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { Scenario } from "../lib/scenario.js";
import { messages } from "../lib/updates.js";

const { agent: methods } = acp.methods;

describe("restart", () => {
  /** @type {Scenario} */ let scenario;
  let sessionId;

  before(async () => {
    scenario = await Scenario.start("restart");
  });
  after(() => scenario?.cleanup());

  it("a prompt answered before the kill", async () => {
    const first = await scenario.hearth();
    await first.initialize();
    ({ sessionId } = await first.agent.request(methods.session.new, { cwd: scenario.cwd, mcpServers: [] }));
    const response = await first.agent.request(methods.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: scenario.fixture.prompts[0] }],
    });
    assert.equal(response.stopReason, "end_turn");
    const { signal } = await first.kill();
    assert.equal(signal, "SIGKILL");
  });

  it("is listed and replayed by a new Hearth on the same data dir", async () => {
    const { fixture } = scenario;
    const second = await scenario.hearth();
    await second.initialize();

    const { sessions } = await second.agent.request(methods.session.list, { cwd: scenario.cwd });
    const listed = sessions.find((s) => s.sessionId === sessionId);
    assert.ok(listed, `session ${sessionId} listed after the restart`);
    assert.equal(listed.title, fixture.prompts[0]);

    const mark = second.updates.mark();
    await second.agent.request(methods.session.load, { sessionId, cwd: scenario.cwd, mcpServers: [] });
    assert.deepEqual(messages(second.updates.of(sessionId, mark)), [
      { kind: "user_message_chunk", text: fixture.prompts[0] },
      { kind: "agent_thought_chunk", text: fixture.thoughts[0] },
      { kind: "agent_message_chunk", text: fixture.answers[0] },
    ]);
  });

  it("Hearth exits cleanly and every frame it wrote is valid ACP", () => scenario.stopAndValidate());
});
