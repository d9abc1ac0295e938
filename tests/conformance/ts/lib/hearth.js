// One `hearth acp` child process driven by the official ACP TypeScript client.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { openSync, closeSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { hearthCommand, hearthPath } from "./paths.js";
import { PermissionDesk } from "./permissions.js";
import { Transcript } from "./transcript.js";
import { UpdateLog } from "./updates.js";

/** The model name the config sets; the mock records it in every request. */
export const MODEL = "conformance-model";
/** The provider key the config sets; the mock records it as a bearer token. */
export const API_KEY = "conformance-key";

/** Environment without provider settings, so the config file is the only source. */
function cleanEnv() {
  const env = { ...process.env };
  for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "HEARTH_MODEL"]) delete env[name];
  return env;
}

/** `extra`: scenario-specific keys from the fixture (e.g. `permissionMode`). */
function writeConfig(file, { dataDir, baseUrl, extra = {} }) {
  const config = { dataDir: hearthPath(dataDir), model: MODEL, providers: { openai: { baseUrl, apiKey: API_KEY } }, ...extra };
  writeFileSync(file, JSON.stringify(config, null, 2));
}

export class Hearth {
  /**
   * Starts `hearth acp` with a config pointing at the mock and a data dir, and connects
   * the official client to its stdio through a tee that records every byte.
   * @param {{ workDir: string, dataDir: string, baseUrl: string, label: string, config?: object }} options
   *   `config`: extra keys for Hearth's config file
   */
  static launch({ workDir, dataDir, baseUrl, label, config }) {
    const configFile = path.join(workDir, `hearth-${label}.json`);
    writeConfig(configFile, { dataDir, baseUrl, extra: config });
    const stderrPath = path.join(workDir, `hearth-${label}.stderr.log`);
    const stderr = openSync(stderrPath, "w");
    const { command, args } = hearthCommand();
    const child = spawn(command, [...args, "acp", "--config", hearthPath(configFile)], {
      stdio: ["pipe", "pipe", stderr],
      env: cleanEnv(),
    });
    closeSync(stderr); // the child has its own copy
    return new Hearth(child, stderrPath);
  }

  constructor(child, stderrPath) {
    this.child = child;
    /** Hearth's logs, for diagnosing a failure. */
    this.stderrPath = stderrPath;
    /** Set by kill(): a killed Hearth owes no clean exit. */
    this.killed = false;
    this.exited = once(child, "exit").then(([code, signal]) => ({ code, signal }));
    this.transcript = new Transcript();
    this.updates = new UpdateLog();
    /** Answers Hearth's `session/request_permission` requests as the test queued. */
    this.permissions = new PermissionDesk();
    const stream = acp.ndJsonStream(
      this.transcript.teeOutgoing(Writable.toWeb(child.stdin)),
      this.transcript.teeIncoming(Readable.toWeb(child.stdout)),
    );
    this.connection = acp
      .client({ name: "hearth-conformance-ts" })
      .onNotification(acp.methods.client.session.update, ({ params }) => this.updates.push(params))
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => this.permissions.answer(params))
      .connect(stream);
  }

  /** The official client's handle for calling agent methods. */
  get agent() {
    return this.connection.agent;
  }

  /** `initialize` as a client without fs or terminal support. */
  initialize() {
    return this.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "hearth-conformance-ts", version: "0.0.0" },
    });
  }

  /** Closes the client and Hearth's stdin: Hearth must exit on its own. */
  async stop() {
    this.connection.close();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.stdin.end();
    return this.exited;
  }

  /** Kills Hearth without warning (SIGKILL), as a crash or a power cut would. */
  async kill() {
    this.killed = true;
    this.child.kill("SIGKILL");
    const exit = await this.exited;
    this.connection.close();
    return exit;
  }
}
