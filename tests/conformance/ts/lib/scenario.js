// What every test sets up: a temp dir, the mock LLM with a fixture's script, a data dir, a
// project dir (the sessions' cwd), and Hearth processes on them.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadFixture } from "./fixtures.js";
import { Hearth } from "./hearth.js";
import { MockLlm } from "./mock-llm.js";
import { hearthPath } from "./paths.js";
import { FrameSchemas } from "./schema.js";

let schema;
function acpSchema() {
  schema ??= FrameSchemas.load();
  return schema;
}

export class Scenario {
  /**
   * @param {string} fixtureName
   * @param {Record<string, string>} vars values for the fixture's `{{name}}` placeholders;
   *   `{{workDir}}` is always this scenario's temp dir
   */
  static async start(fixtureName, vars = {}) {
    const workDir = mkdtempSync(path.join(tmpdir(), "hearth-conformance-"));
    const fixture = loadFixture(fixtureName, { workDir, ...vars });
    const mock = await MockLlm.start(fixture.script, workDir);
    return new Scenario(workDir, fixture, mock);
  }

  constructor(workDir, fixture, mock) {
    this.workDir = workDir;
    this.fixture = fixture;
    this.mock = mock;
    this.dataDir = path.join(workDir, "data");
    /** The sessions' project dir on the host. */
    this.project = path.join(workDir, "project");
    mkdirSync(this.project);
    /** The cwd of the sessions as Hearth names it (paths.js hearthPath): absolute, as ACP requires. */
    this.cwd = hearthPath(this.project);
    /** @type {Hearth[]} every Hearth started, so all their frames get validated */
    this.hearths = [];
    /** Set once stopAndValidate() passed: only then is the temp dir removed. */
    this.passed = false;
  }

  /** Starts a Hearth on this scenario's data dir, with the fixture's extra config. */
  async hearth() {
    const hearth = Hearth.launch({
      workDir: this.workDir,
      dataDir: this.dataDir,
      baseUrl: this.mock.baseUrl,
      label: String(this.hearths.length + 1),
      config: this.fixture.config,
    });
    this.hearths.push(hearth);
    return hearth;
  }

  /**
   * Stops every Hearth (each must exit 0 at EOF on stdin, unless it was killed) and the
   * mock, then asserts that every frame every Hearth wrote validates against the schema.
   * Each suite runs this as its last test so a bad frame counts as a failed test.
   */
  async stopAndValidate() {
    const exits = [];
    for (const hearth of this.hearths) exits.push({ hearth, exit: await hearth.stop() });
    await this.mock.stop();
    for (const { hearth, exit } of exits.filter(({ hearth }) => !hearth.killed)) {
      assert.deepEqual(exit, { code: 0, signal: null }, `Hearth exits 0 at EOF on stdin (log: ${hearth.stderrPath})`);
    }
    const problems = this.hearths.flatMap((h) => h.transcript.schemaProblems(acpSchema()));
    const frames = this.hearths.reduce((n, h) => n + h.transcript.incoming().length, 0);
    assert.ok(frames > 0, "Hearth wrote no frames at all");
    if (problems.length > 0) {
      const logs = this.hearths.map((h) => h.stderrPath).join(", ");
      assert.fail(`${problems.length} of ${frames} frames break the ACP schema (logs: ${logs}):\n${problems.join("\n")}`);
    }
    this.passed = true;
  }

  /** Stops whatever still runs; the temp dir (with Hearth's logs) stays if anything failed. */
  async cleanup() {
    for (const hearth of this.hearths) await hearth.stop();
    await this.mock.stop();
    if (this.passed) rmSync(this.workDir, { recursive: true, force: true });
    else console.error(`kept ${this.workDir} (Hearth logs, config, script) for diagnosis`);
  }
}
