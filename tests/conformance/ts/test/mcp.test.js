// MCP servers passed in `session/new` and `session/resume` (a real stdio server on the
// official Python MCP SDK, tests/mcp/server.py, and a command that does not exist): the
// missing one is reported to this client (which has no `session.notices`) as a failed tool
// call, its sibling's read-only `echo` runs through the model without a permission request,
// and closing the session or Hearth leaves no server process behind.

import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { mcpTestServers } from "../lib/mcp-servers.js";
import { contentText, toolResults } from "../lib/mock-llm.js";
import { spawnErrorsLost, windowsHearth } from "../lib/paths.js";
import { pidsIn, pollGone } from "../lib/processes.js";
import { Scenario } from "../lib/scenario.js";
import { ofKind, textOf, toolCallStatuses } from "../lib/updates.js";

const { agent: methods } = acp.methods;

/** Every test's bound: far above what a stdio server of the Python SDK takes to start. */
const TEST_TIMEOUT_MS = 30_000;
/** How long the failed-server report may take after the session/new response. */
const REPORT_TIMEOUT_MS = 10_000;
/** Grace for a server to exit once its session or Hearth closed. */
const EXIT_GRACE_MS = 10_000;

/** The report of a server that failed, as a client without `session.notices` gets it. */
const isReportOf = (name) => (u) =>
  u.sessionUpdate === "tool_call" && u.kind === "other" && typeof u.title === "string" && u.title.includes(name);

/** The text contents of a tool call update. */
const texts = (update) =>
  (update.content ?? []).filter((c) => c.type === "content" && c.content?.type === "text").map((c) => c.content.text);

/** The names in a session response's `_meta.hearth.mcpServers` (Hearth's MCP state). */
const metaNames = (response) => (response._meta?.hearth?.mcpServers ?? []).map((s) => s.name);

/** Why the scenario cannot run against a Windows Hearth. */
const WINDOWS_SKIP = "the MCP test server is the host's Linux Python (tests/mcp/.venv), which a Windows Hearth cannot start";

describe("a session with MCP servers", { skip: windowsHearth && WINDOWS_SKIP }, () => {
  /** @type {Scenario} */ let scenario;
  /** @type {import("../lib/hearth.js").Hearth} */ let hearth;
  let fixture;
  let sessionId;
  let pidFile;

  before(
    async () => {
      const mcp = mcpTestServers();
      scenario = await Scenario.start("mcp", { mcpPython: mcp.python, mcpServer: mcp.server });
      fixture = scenario.fixture;
      pidFile = path.join(scenario.workDir, "mcp-pids.txt");
      hearth = await scenario.hearth();
    },
    { timeout: 5 * 60_000 }, // a first run installs the servers
  );
  after(() => scenario?.cleanup());

  /** One prompt whose model calls `echo` of `files` (response `callResponse`), then answers. */
  async function echoTurn(promptIndex, callResponse) {
    const [call] = fixture.toolCalls[callResponse];
    const mark = hearth.updates.mark();
    const response = await hearth.agent.request(methods.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: fixture.prompts[promptIndex] }],
    });
    assert.equal(response.stopReason, "end_turn");
    const turn = hearth.updates.of(sessionId, mark);
    const calls = ofKind(turn, "tool_call");
    assert.equal(calls.length, 1, `one tool call announced: ${JSON.stringify(calls)}`);
    const [start] = calls;
    assert.equal(start.kind, "read", "echo is annotated readOnlyHint: a read");
    assert.deepEqual(start.rawInput, call.arguments);
    const statuses = toolCallStatuses(turn, start.toolCallId);
    assert.equal(statuses.at(-1), "completed", `final status completed, got ${statuses.join(" → ")}`);
    assert.ok(!statuses.includes("failed"), statuses.join(" → "));
    const done = turn.findLast((u) => u.toolCallId === start.toolCallId && u.status === "completed");
    const shown = [...texts(start), ...texts(done)].join("\n");
    assert.ok(shown.includes(call.arguments.text), `the client sees the echoed text: ${JSON.stringify(done)}`);
    assert.equal(textOf(turn, "agent_message_chunk"), fixture.answers[callResponse] + fixture.answers[callResponse + 1]);
    return { call, turn };
  }

  it("initialize advertises MCP over HTTP and not over SSE", { timeout: TEST_TIMEOUT_MS }, async () => {
    const init = await hearth.initialize();
    const caps = init.agentCapabilities.mcpCapabilities;
    assert.equal(caps?.http, true);
    assert.equal(caps?.sse ?? false, false);
  });

  it("session/new with a working and a missing server succeeds and names both in _meta", { timeout: TEST_TIMEOUT_MS }, async () => {
    const response = await hearth.agent.request(methods.session.new, {
      cwd: scenario.cwd,
      mcpServers: fixture.mcpServers,
    });
    ({ sessionId } = response);
    assert.equal(typeof sessionId, "string");
    assert.deepEqual(metaNames(response).sort(), ["files", "missing"]);
  });

  it("the missing server is reported once, as a failed tool call after the session/new response", { timeout: TEST_TIMEOUT_MS }, async (t) => {
    await hearth.updates.waitFor(sessionId, isReportOf("missing"), REPORT_TIMEOUT_MS);
    const reports = hearth.updates.of(sessionId).filter(isReportOf("missing"));
    assert.equal(reports.length, 1, "reported once");
    const [report] = reports;
    assert.equal(report.status, "failed");
    const missing = fixture.mcpServers.find((s) => s.name === "missing");
    if (spawnErrorsLost) t.diagnostic(`not checked that the reason names the command: ${spawnErrorsLost}`);
    else assert.ok(texts(report).join("").includes(missing.command), `the reason, naming the command, is its text: ${JSON.stringify(report)}`);
    assert.equal(hearth.updates.of(sessionId).filter(isReportOf("files")).length, 0, "the working server is not reported");

    // On the wire: the report follows the response (the client knows the session by then).
    const { transcript } = hearth;
    const request = transcript.lastRequest(methods.session.new);
    const response = transcript.responseTo(request);
    assert.ok(response, "session/new response recorded");
    assert.equal(transcript.updatesBetween(sessionId, request, response).filter(isReportOf("missing")).length, 0);
    assert.equal(transcript.updatesBetween(sessionId, response).filter(isReportOf("missing")).length, 1);
  });

  it("the model calls mcp__files__echo: offered, runs without asking, completes, its result reaches the model", { timeout: TEST_TIMEOUT_MS }, async () => {
    const asked = hearth.permissions.requests.length;
    const { call } = await echoTurn(0, 0);
    assert.equal(hearth.permissions.requests.length, asked, "a read-only tool runs without a permission request");

    const requests = await scenario.mock.requests();
    assert.equal(requests.length, 2, "the tool call, then the follow-up");
    const tools = (requests[0].body.tools ?? []).map((t) => t.function);
    const echo = tools.find((t) => t.name === call.name);
    assert.ok(echo, `${call.name} offered to the model: ${tools.map((t) => t.name).join(", ")}`);
    assert.equal(echo.parameters?.properties?.text?.type, "string", "with the server's input schema");
    assert.ok(!tools.some((t) => t.name.startsWith("mcp__missing")), "nothing offered for the missing server");
    const system = requests[0].body.messages.filter((m) => m.role === "system").map(contentText).join("\n");
    assert.match(system, /missing/, "the model is told the missing server is unavailable");

    const results = toolResults(requests[1], call.id);
    assert.equal(results.length, 1, "the follow-up request carries the tool result");
    assert.ok(contentText(results[0]).includes(call.arguments.text), contentText(results[0]));
  });

  it("session/close stops the server; session/resume with `files` alone reconnects it and echo works again", { timeout: TEST_TIMEOUT_MS }, async () => {
    const first = pidsIn(pidFile);
    assert.equal(first.length, 1, `one server process started: ${first}`);
    assert.deepEqual(await hearth.agent.request(methods.session.close, { sessionId }), {});
    assert.deepEqual(await pollGone(first, EXIT_GRACE_MS), [], "the server exits when its session closes");

    const mark = hearth.updates.mark();
    const servers = fixture.mcpServers.filter((s) => s.name === "files");
    const resumed = await hearth.agent.request(methods.session.resume, { sessionId, cwd: scenario.cwd, mcpServers: servers });
    assert.deepEqual(metaNames(resumed), ["files"], "the restored session has the servers of the resume request");

    const { call } = await echoTurn(1, 2);
    assert.equal(pidsIn(pidFile).length, 2, "a new server process for the resumed session");
    assert.equal(hearth.updates.of(sessionId, mark).filter(isReportOf("missing")).length, 0, "no report for a server not asked for");
    const requests = await scenario.mock.requests();
    assert.equal(requests.length, 4);
    assert.ok((requests[2].body.tools ?? []).some((t) => t.function.name === call.name), "offered again");
    const results = toolResults(requests[3], call.id);
    assert.equal(results.length, 1, "the follow-up request carries the tool result");
    assert.ok(contentText(results[0]).includes(call.arguments.text), contentText(results[0]));
  });

  it("Hearth exits cleanly, no MCP server outlives it, and every frame it wrote is valid ACP", { timeout: TEST_TIMEOUT_MS }, async () => {
    // Checked before stopAndValidate(), which marks the scenario passed (its temp dir goes).
    await hearth.stop();
    const pids = pidsIn(pidFile);
    assert.equal(pids.length, 2, `the two servers started: ${pids}`);
    assert.deepEqual(await pollGone(pids, EXIT_GRACE_MS), [], "no MCP server process left");
    await scenario.stopAndValidate();
  });
});
