// Slash commands as an SDK client sees them: the `available_commands_update` that follows the
// session/new response (on the raw byte order), and `/help` answered without the model.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { Scenario } from "../lib/scenario.js";
import { ofKind, textOf } from "../lib/updates.js";

const { agent: methods } = acp.methods;
const LIST_TIMEOUT_MS = 10_000;
/** Hearth's built-in commands (the list may hold custom ones too). */
const BUILTINS = ["help", "compact", "undo", "mcp", "model", "mode", "init"];

describe("commands", () => {
  /** @type {Scenario} */ let scenario;
  let hearth;
  let sessionId;

  before(async () => {
    scenario = await Scenario.start("commands");
    hearth = await scenario.hearth();
    await hearth.initialize();
  });
  after(() => scenario?.cleanup());

  it("available_commands_update follows the session/new response", async () => {
    ({ sessionId } = await hearth.agent.request(methods.session.new, { cwd: scenario.cwd, mcpServers: [] }));
    const isList = (u) => u.sessionUpdate === "available_commands_update";
    await hearth.updates.waitFor(sessionId, isList, LIST_TIMEOUT_MS);
    const [list] = ofKind(hearth.updates.of(sessionId), "available_commands_update");
    const names = list.availableCommands.map((c) => c.name);
    for (const name of BUILTINS) assert.ok(names.includes(name), `${name} in ${names}`);
    const model = list.availableCommands.find((c) => c.name === "model");
    assert.ok(model.input?.hint, "a command that takes input has a hint");

    const { transcript } = hearth;
    const request = transcript.lastRequest(methods.session.new);
    const response = transcript.responseTo(request);
    assert.ok(response, "session/new response recorded");
    assert.equal(transcript.updatesBetween(sessionId, request, response).filter(isList).length, 0, "not before the response");
    assert.equal(transcript.updatesBetween(sessionId, response).filter(isList).length, 1, "once, after it");
  });

  it("/help lists the commands as an agent message, without the model", async () => {
    const mark = hearth.updates.mark();
    const response = await hearth.agent.request(methods.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: scenario.fixture.prompts[0] }],
    });
    assert.equal(response.stopReason, "end_turn");
    const answer = textOf(hearth.updates.of(sessionId, mark), "agent_message_chunk");
    for (const name of BUILTINS) assert.ok(answer.includes(`/${name}`), `/${name} in ${answer}`);
    assert.equal((await scenario.mock.requests()).length, 0, "no model request");
  });

  it("Hearth exits cleanly and every frame it wrote is valid ACP", () => scenario.stopAndValidate());
});
