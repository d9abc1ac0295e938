// Where the suite finds the repo's binaries, the ACP schema and the fixtures.
// Everything is located relative to this file so the suite runs from any cwd and in a
// fresh clone.

import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

/** tests/conformance/ts/lib → the repository root. */
export const repoRoot = path.resolve(here, "../../../..");

/** tests/conformance/fixtures: data shared with the Python suite. */
export const fixturesDir = path.resolve(here, "../../fixtures");

/**
 * The ACP v1 stable schema the frames must validate against: the vendored copy
 * (tests/acp/README.md), or `HEARTH_ACP_SCHEMA` to try another, as in the Rust tests.
 */
export const schemaPath = path.resolve(
  process.env.HEARTH_ACP_SCHEMA || path.join(repoRoot, "tests/acp/schema.json"),
);

/**
 * The ACP v1 schema with its unstable parts, for the answers to the unstable methods Hearth
 * serves (`UNSTABLE_METHODS` in schema.js), or `HEARTH_ACP_UNSTABLE_SCHEMA`, as in the Rust tests.
 */
export const unstableSchemaPath = path.resolve(
  process.env.HEARTH_ACP_UNSTABLE_SCHEMA || path.join(repoRoot, "tests/acp/schema.unstable.json"),
);

/** Cargo's target dir: `CARGO_TARGET_DIR` (relative to the repo root) or `<repo>/target`. */
function targetDir() {
  const fromEnv = process.env.CARGO_TARGET_DIR;
  return fromEnv ? path.resolve(repoRoot, fromEnv) : path.join(repoRoot, "target");
}

/**
 * Path of a debug binary built by cargo. The suite never builds: a missing binary is a
 * setup error with the command that fixes it.
 * @param {string} name
 */
export function binary(name) {
  const file = path.join(targetDir(), "debug", name);
  if (!existsSync(file)) {
    throw new Error(
      `${file} does not exist: build it first with ` +
        "`cargo build -p hearth-cli -p hearth-mock-llm` in the repository root",
    );
  }
  return file;
}
