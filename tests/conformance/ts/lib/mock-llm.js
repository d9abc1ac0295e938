// The scripted mock LLM (tests/mock-llm) as a child process.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { binary } from "./paths.js";

/** The text of an OpenAI chat message, whether its content is a string or parts. */
export function contentText(message) {
  if (typeof message.content === "string") return message.content;
  return (message.content ?? []).map((part) => part.text ?? "").join("");
}

/** The `tool` messages of a recorded model request answering the call with this id. */
export function toolResults(request, callId) {
  return request.body.messages.filter((m) => m.role === "tool" && m.tool_call_id === callId);
}

export class MockLlm {
  /**
   * Starts the mock with a script and waits for the one line it prints: its base URL.
   * @param {object} script `{responses: [...]}` in the mock's format
   * @param {string} dir where to write the script file
   */
  static async start(script, dir) {
    const file = path.join(dir, "mock-script.json");
    writeFileSync(file, JSON.stringify(script));
    // stdin stays a pipe: the mock serves until it closes, so a dying test never leaks it.
    const child = spawn(binary("hearth-mock-llm"), ["--script", file], { stdio: ["pipe", "pipe", "inherit"] });
    const baseUrl = await Promise.race([
      once(createInterface({ input: child.stdout }), "line").then(([line]) => line.trim()),
      once(child, "exit").then(() => null),
    ]);
    if (!baseUrl) throw new Error(`hearth-mock-llm exited (${child.exitCode}) before printing its URL`);
    return new MockLlm(child, baseUrl);
  }

  constructor(child, baseUrl) {
    this.child = child;
    /** e.g. http://127.0.0.1:41234/v1: what the agent's provider points at */
    this.baseUrl = baseUrl;
    this.origin = new URL(baseUrl).origin;
  }

  /** Every model request so far: `[{method, path, headers, body}]`, oldest first. */
  async requests() {
    const response = await fetch(`${this.origin}/_mock/requests`);
    if (!response.ok) throw new Error(`GET /_mock/requests: HTTP ${response.status}`);
    return response.json();
  }

  async stop() {
    if (this.child.exitCode !== null) return;
    const exited = once(this.child, "exit");
    this.child.stdin.end();
    await exited;
  }
}
