// A session's whole life through the official TypeScript client: initialize, new, two
// prompts, list, close, load (with replay), resume, delete.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { API_KEY, MODEL } from "../lib/hearth.js";
import { contentText } from "../lib/mock-llm.js";
import { Scenario } from "../lib/scenario.js";
import { history, messages, ofKind, textOf } from "../lib/updates.js";

const { agent: methods } = acp.methods;

describe("session lifecycle", () => {
  /** @type {Scenario} */ let scenario;
  /** @type {import("../lib/hearth.js").Hearth} */ let hearth;
  let fixture;
  let sessionId;
  /** What the first prompt streamed, to compare with the replay. */
  let firstTurn;

  before(async () => {
    scenario = await Scenario.start("lifecycle");
    fixture = scenario.fixture;
    hearth = await scenario.hearth();
  });
  after(() => scenario?.cleanup());

  const prompt = (text, id = sessionId) =>
    hearth.agent.request(methods.session.prompt, { sessionId: id, prompt: [{ type: "text", text }] });

  it("initialize answers protocol version 1 and advertises the session methods", async () => {
    const init = await hearth.initialize();
    assert.equal(init.protocolVersion, 1);
    const caps = init.agentCapabilities;
    assert.equal(caps.loadSession, true);
    assert.equal(caps.promptCapabilities.embeddedContext, true);
    assert.equal(caps.promptCapabilities.image, true);
    assert.equal(caps.promptCapabilities.audio, false);
    for (const method of ["list", "delete", "resume", "close"]) {
      assert.ok(caps.sessionCapabilities?.[method], `sessionCapabilities.${method} advertised`);
    }
    // No `hearth-auth` (terminal sign-in): this client does not advertise `auth.terminal`.
    assert.deepEqual(init.authMethods.map((m) => m.id), ["openai-api-key", "anthropic-api-key"]);
  });

  it("session/new gives a session id", async () => {
    ({ sessionId } = await hearth.agent.request(methods.session.new, { cwd: scenario.cwd, mcpServers: [] }));
    assert.equal(typeof sessionId, "string");
    assert.ok(sessionId.length > 0);
  });

  it("the first prompt streams the scripted answer, thought and title, then end_turn", async () => {
    const mark = hearth.updates.mark();
    const response = await prompt(fixture.prompts[0]);
    assert.equal(response.stopReason, "end_turn");
    firstTurn = hearth.updates.of(sessionId, mark);

    const chunks = ofKind(firstTurn, "agent_message_chunk");
    assert.equal(textOf(firstTurn, "agent_message_chunk"), fixture.answers[0]);
    assert.ok(chunks.every((c) => typeof c.messageId === "string" && c.messageId.length > 0), "every chunk has a messageId");
    assert.equal(new Set(chunks.map((c) => c.messageId)).size, 1, "one answer, one messageId");
    assert.equal(textOf(firstTurn, "agent_thought_chunk"), fixture.thoughts[0]);

    const infos = ofKind(firstTurn, "session_info_update");
    assert.equal(infos.length, 1, "exactly one session_info_update");
    assert.equal(infos[0].title, fixture.prompts[0]);
  });

  it("the first model request carries the configured model, key and the prompt", async () => {
    const [request] = await scenario.mock.requests();
    assert.equal(request.body.model, MODEL);
    assert.equal(request.body.stream, true);
    assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
    const last = request.body.messages.at(-1);
    assert.deepEqual([last.role, contentText(last)], ["user", fixture.prompts[0]]);
  });

  it("the second prompt sends the first exchange to the model", async () => {
    const mark = hearth.updates.mark();
    const response = await prompt(fixture.prompts[1]);
    assert.equal(response.stopReason, "end_turn");
    const turn = hearth.updates.of(sessionId, mark);
    assert.equal(textOf(turn, "agent_message_chunk"), fixture.answers[1]);
    assert.equal(ofKind(turn, "session_info_update").length, 0, "the title is sent once");

    const requests = await scenario.mock.requests();
    assert.equal(requests.length, 2);
    const conversation = requests[1].body.messages
      .filter((m) => m.role === "user" || m.role === "assistant")
      .map((m) => [m.role, contentText(m)]);
    assert.deepEqual(conversation, [
      ["user", fixture.prompts[0]],
      ["assistant", fixture.answers[0]],
      ["user", fixture.prompts[1]],
    ]);
  });

  it("session/list finds the session with its title and updatedAt", async () => {
    const { sessions } = await hearth.agent.request(methods.session.list, { cwd: scenario.cwd });
    const found = sessions.find((s) => s.sessionId === sessionId);
    assert.ok(found, `session ${sessionId} listed`);
    assert.equal(found.cwd, scenario.cwd);
    assert.equal(found.title, fixture.prompts[0]);
    assert.ok(!Number.isNaN(Date.parse(found.updatedAt)), `updatedAt is a date: ${found.updatedAt}`);
  });

  it("session/close succeeds", async () => {
    assert.deepEqual(await hearth.agent.request(methods.session.close, { sessionId }), {});
  });

  it("session/load replays the conversation before its response", async () => {
    await hearth.agent.request(methods.session.load, { sessionId, cwd: scenario.cwd, mcpServers: [] });

    // Order as Hearth wrote it: the replay must sit between the request and its response.
    const { transcript } = hearth;
    const request = transcript.lastRequest(methods.session.load, sessionId);
    const response = transcript.responseTo(request);
    assert.ok(response, "load response recorded");
    const replay = history(transcript.updatesBetween(sessionId, request, response));
    assert.equal(history(transcript.updatesBetween(sessionId, response)).length, 0, "no replay after the response");

    assert.deepEqual(
      messages(replay).filter((m) => m.kind !== "agent_thought_chunk"),
      [
        { kind: "user_message_chunk", text: fixture.prompts[0] },
        { kind: "agent_message_chunk", text: fixture.answers[0] },
        { kind: "user_message_chunk", text: fixture.prompts[1] },
        { kind: "agent_message_chunk", text: fixture.answers[1] },
      ],
    );
    assert.equal(textOf(replay, "agent_message_chunk"), fixture.answers.join(""));
    assert.equal(
      textOf(replay, "agent_thought_chunk"),
      textOf(firstTurn, "agent_thought_chunk"),
      "the replayed thought equals the streamed one",
    );
    assert.equal(ofKind(replay, "session_info_update").at(-1)?.title, fixture.prompts[0]);
  });

  it("session/resume restores the session without replaying it", async () => {
    const { transcript } = hearth;
    await hearth.agent.request(methods.session.resume, { sessionId, cwd: scenario.cwd });
    const request = transcript.lastRequest(methods.session.resume, sessionId);
    const response = transcript.responseTo(request);
    assert.ok(response, "resume response recorded");
    assert.deepEqual(history(transcript.updatesBetween(sessionId, request, response)), []);
  });

  it("session/delete removes it: gone from the list, prompts get -32002", async () => {
    const { transcript } = hearth;
    const resumed = transcript.responseTo(transcript.lastRequest(methods.session.resume, sessionId));
    assert.deepEqual(await hearth.agent.request(methods.session.delete, { sessionId }), {});

    const { sessions } = await hearth.agent.request(methods.session.list, { cwd: scenario.cwd });
    assert.ok(!sessions.some((s) => s.sessionId === sessionId), "deleted session not listed");

    await assert.rejects(prompt("anyone there?"), (error) => {
      assert.ok(error instanceof acp.RequestError, `a JSON-RPC error, got ${error}`);
      assert.equal(error.code, -32002);
      assert.equal(error.data?.sessionId, sessionId);
      return true;
    });
    assert.deepEqual(history(transcript.updatesBetween(sessionId, resumed)), [], "resume replayed nothing, even late");
  });

  it("Hearth exits cleanly and every frame it wrote is valid ACP", () => scenario.stopAndValidate());
});
