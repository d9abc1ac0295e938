// The validator itself: it must pick definitions from the schema's annotations and reject
// bad frames, or "every frame validated" would prove nothing.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AcpSchema } from "../lib/schema.js";
import { Transcript } from "../lib/transcript.js";

const schema = AcpSchema.load();
const promptRequest = () => "session/prompt";
const chunk = (update) => ({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update } });
/** The agent asking the client: a request in the agent's own id space. */
const askPermission = (params) => ({ jsonrpc: "2.0", id: 0, method: "session/request_permission", params });
const diff = { type: "diff", path: "/w/a.txt", oldText: null, newText: "hi" };
const allowOnce = { optionId: "allow_once", name: "Allow", kind: "allow_once" };
const pendingCall = { toolCallId: "tc", title: "Create a.txt", status: "pending", content: [diff] };
const { newText: _, ...diffWithoutNewText } = diff;

describe("ACP schema validator", () => {
  it("derives the definitions from x-method / x-side", () => {
    assert.equal(schema.notifications.get("session/update"), "SessionNotification");
    assert.equal(schema.responses.get("session/prompt"), "PromptResponse");
    assert.equal(schema.responses.get("session/load"), "LoadSessionResponse");
    assert.equal(schema.requests.get("session/request_permission"), "RequestPermissionRequest");
  });

  it("accepts valid frames", () => {
    assert.deepEqual(schema.problems({ jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } }, promptRequest), []);
    const text = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" }, messageId: "m" };
    assert.deepEqual(schema.problems(chunk(text), promptRequest), []);
    const notFound = { jsonrpc: "2.0", id: 1, error: { code: -32002, message: "no", data: { sessionId: "s" } } };
    assert.deepEqual(schema.problems(notFound, promptRequest), []);
    const ask = askPermission({ sessionId: "s", toolCall: pendingCall, options: [allowOnce] });
    assert.deepEqual(schema.problems(ask, () => undefined), []);
    const output = { terminal_output: { terminal_id: "tc", data: "hi\n" } };
    assert.deepEqual(schema.problems(chunk({ sessionUpdate: "tool_call_update", toolCallId: "tc", _meta: output }), promptRequest), []);
  });

  it("rejects frames that break the schema", () => {
    const bad = [
      { jsonrpc: "2.0", id: 1, result: { stopReason: "finished" } },
      { jsonrpc: "2.0", id: 1, result: {} },
      chunk({ sessionUpdate: "agent_message_chunk" }),
      chunk({ sessionUpdate: "no_such_update", content: { type: "text", text: "x" } }),
      { jsonrpc: "2.0", id: 1, error: { code: "oops", message: "x" } },
      { jsonrpc: "1.0", id: 1, result: { stopReason: "end_turn" } },
      { jsonrpc: "2.0", method: "session/unknown", params: {} },
      { jsonrpc: "2.0", id: 0, method: "session/unknown", params: {} },
      askPermission({ sessionId: "s", toolCall: pendingCall }),
      askPermission({ sessionId: "s", toolCall: pendingCall, options: [{ ...allowOnce, kind: "allow_forever" }] }),
      askPermission({ sessionId: "s", toolCall: { ...pendingCall, content: [diffWithoutNewText] }, options: [allowOnce] }),
      chunk({ sessionUpdate: "tool_call_update", toolCallId: "tc", _meta: "terminal output" }),
      chunk({ sessionUpdate: "tool_call_update", toolCallId: "tc", status: "stopped" }),
    ];
    for (const frame of bad) {
      assert.notDeepEqual(schema.problems(frame, promptRequest), [], JSON.stringify(frame));
    }
  });

  it("rejects a response to a request the client never sent", () => {
    const problems = schema.problems({ jsonrpc: "2.0", id: 9, result: {} }, () => undefined);
    assert.match(problems.join(), /never used/);
  });

  it("reports lines that are not JSON or not terminated", () => {
    const transcript = new Transcript();
    transcript.push("out", Buffer.from('{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}\n'));
    transcript.push("in", Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}\nnot json\n{"jsonrpc":'));
    transcript.finish("in");
    const problems = transcript.schemaProblems(schema);
    assert.equal(problems.length, 2, problems.join("\n"));
    assert.match(problems[0], /not a JSON frame/);
    assert.match(problems[1], /not terminated/);
  });
});
