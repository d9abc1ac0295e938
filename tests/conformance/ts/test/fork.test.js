// `session/fork` and `session/set_title` (unstable) through the official TypeScript client:
// a fork's first model request is its parent's context then its own prompt, a cut point in
// `_meta.hearth.fork.messageId`, the lineage in `session/list`, a user title normalised and
// announced. Their answers are checked against the unstable schema (lib/schema.js).

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import * as unstable from "@agentclientprotocol/sdk/unstable";
import { contentText } from "../lib/mock-llm.js";
import { Scenario } from "../lib/scenario.js";
import { ofKind } from "../lib/updates.js";

const { agent: methods } = acp.methods;
// The SDK names the unstable methods in its `unstable` entry point only.
const { fork: forkMethod, setTitle } = unstable.methods.agent.session;

/** The `[role, text]` of a recorded model request's messages after the system prompt. */
const conversation = (request) => request.body.messages.slice(1).map((m) => [m.role, contentText(m)]);

describe("session/fork and session/set_title", () => {
  /** @type {Scenario} */ let scenario;
  /** @type {import("../lib/hearth.js").Hearth} */ let hearth;
  let fixture;
  let parent;
  let fork;

  before(async () => {
    scenario = await Scenario.start("fork");
    fixture = scenario.fixture;
    hearth = await scenario.hearth();
  });
  after(() => scenario?.cleanup());

  const prompt = (text, sessionId) =>
    hearth.agent.request(methods.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  const forkOf = (sessionId, extra = {}) =>
    hearth.agent.request(forkMethod, { sessionId, cwd: scenario.cwd, mcpServers: [], ...extra });
  const listed = async (sessionId) =>
    (await hearth.agent.request(methods.session.list, {})).sessions.find((s) => s.sessionId === sessionId);

  it("initialize advertises fork and title", async () => {
    const caps = (await hearth.initialize()).agentCapabilities.sessionCapabilities;
    assert.deepEqual(caps.fork, {});
    assert.deepEqual(caps.title, {});
  });

  it("a fork of the whole session sends the parent's context, then its own prompt", async () => {
    ({ sessionId: parent } = await hearth.agent.request(methods.session.new, { cwd: scenario.cwd, mcpServers: [] }));
    for (const text of fixture.prompts.slice(0, 2)) assert.equal((await prompt(text, parent)).stopReason, "end_turn");
    const forked = await forkOf(parent);
    fork = forked.sessionId;
    assert.notEqual(fork, parent);
    assert.equal(forked.modes.currentModeId, "ask");
    assert.equal((await prompt(fixture.prompts[2], fork)).stopReason, "end_turn");
    const requests = await scenario.mock.requests();
    assert.deepEqual(conversation(requests[2]), [
      ["user", fixture.prompts[0]],
      ["assistant", fixture.answers[0]],
      ["user", fixture.prompts[1]],
      ["assistant", fixture.answers[1]],
      ["user", fixture.prompts[2]],
    ]);
  });

  it("a fork at a prompt keeps only what came before it", async () => {
    // The replay names each prompt's messageId.
    const mark = hearth.updates.mark();
    await hearth.agent.request(methods.session.load, { sessionId: parent, cwd: scenario.cwd, mcpServers: [] });
    const second = ofKind(hearth.updates.of(parent, mark), "user_message_chunk").find(
      (u) => u.content.text === fixture.prompts[1],
    );
    const cut = await forkOf(parent, { _meta: { hearth: { fork: { messageId: second.messageId } } } });
    assert.equal((await prompt(fixture.prompts[3], cut.sessionId)).stopReason, "end_turn");
    const requests = await scenario.mock.requests();
    assert.deepEqual(conversation(requests[3]), [
      ["user", fixture.prompts[0]],
      ["assistant", fixture.answers[0]],
      ["user", fixture.prompts[3]],
    ]);
  });

  it("an unknown cut point gets -32602", async () => {
    await assert.rejects(forkOf(parent, { _meta: { hearth: { fork: { messageId: "msg_never_sent" } } } }), (error) => {
      assert.equal(error.code, -32602, error.message);
      return true;
    });
  });

  it("session/list shows the fork's lineage", async () => {
    const entry = await listed(fork);
    assert.equal(entry._meta.hearth.parentSessionId, parent);
    assert.equal(typeof entry._meta.hearth.forkedAt, "number");
    assert.equal((await listed(parent))._meta, undefined);
  });

  it("session/set_title answers the normalised title and announces it", async () => {
    const mark = hearth.updates.mark();
    const answer = await hearth.agent.request(setTitle, { sessionId: fork, title: "  A   side\ttrip  " });
    assert.deepEqual(answer, { title: "A side trip" });
    const infos = ofKind(hearth.updates.of(fork, mark), "session_info_update");
    assert.deepEqual(infos.map((u) => u.title), ["A side trip"]);
    assert.equal((await listed(fork)).title, "A side trip");
  });

  it("session/set_title refuses an empty title and an unknown session", async () => {
    await assert.rejects(hearth.agent.request(setTitle, { sessionId: fork, title: " \n " }), (error) => {
      assert.equal(error.code, -32602, error.message);
      return true;
    });
    const unknown = { sessionId: "sess_does_not_exist", title: "A title" };
    await assert.rejects(hearth.agent.request(setTitle, unknown), (error) => {
      assert.equal(error.code, -32002, error.message);
      assert.deepEqual(error.data, { sessionId: unknown.sessionId });
      return true;
    });
  });

  it("Hearth exits cleanly and every frame it wrote is valid ACP", () => scenario.stopAndValidate());
});
