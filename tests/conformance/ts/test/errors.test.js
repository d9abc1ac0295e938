// The errors a client sees on misuse: each with the code clients depend on, and valid
// JSON-RPC / ACP error frames (checked by the last test like every other frame).

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { Scenario } from "../lib/scenario.js";

const { agent: methods } = acp.methods;
const UNKNOWN = "sess_does_not_exist";

/** Asserts that `promise` rejects with a JSON-RPC error of `code` (and `data`, if given). */
async function rejectsWith(promise, code, data) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof acp.RequestError, `a JSON-RPC error, got ${error}`);
    assert.equal(error.code, code, error.message);
    if (data) assert.deepEqual(error.data, data);
    return true;
  });
}

describe("errors", () => {
  /** @type {Scenario} */ let scenario;
  /** @type {import("../lib/hearth.js").Hearth} */ let hearth;

  before(async () => {
    scenario = await Scenario.start("errors");
    hearth = await scenario.hearth();
  });
  after(() => scenario?.cleanup());

  it("a request before initialize gets -32600", async () => {
    await rejectsWith(hearth.agent.request(methods.session.new, { cwd: scenario.cwd, mcpServers: [] }), -32600);
    await hearth.initialize();
  });

  it("session/new with a relative cwd gets -32602", async () => {
    await rejectsWith(hearth.agent.request(methods.session.new, { cwd: "relative/dir", mcpServers: [] }), -32602);
  });

  it("unknown session ids get -32002 with data.sessionId", async () => {
    const notFound = [-32002, { sessionId: UNKNOWN }];
    const { cwd } = scenario;
    await rejectsWith(hearth.agent.request(methods.session.load, { sessionId: UNKNOWN, cwd, mcpServers: [] }), ...notFound);
    await rejectsWith(hearth.agent.request(methods.session.resume, { sessionId: UNKNOWN, cwd }), ...notFound);
    const prompt = [{ type: "text", text: "hello?" }];
    await rejectsWith(hearth.agent.request(methods.session.prompt, { sessionId: UNKNOWN, prompt }), ...notFound);
  });

  it("session/delete of an unknown id succeeds silently", async () => {
    assert.deepEqual(await hearth.agent.request(methods.session.delete, { sessionId: UNKNOWN }), {});
  });

  it("an unknown method gets -32601", async () => {
    await rejectsWith(hearth.agent.request("_hearth_conformance/no_such_method", {}), -32601);
  });

  it("Hearth exits cleanly and every frame it wrote is valid ACP", () => scenario.stopAndValidate());
});
