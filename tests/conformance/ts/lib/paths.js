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

/**
 * The Hearth under test, as `{ command, args }` to spawn: `HEARTH_BIN` (default: the debug
 * `hearth` above), started through `HEARTH_BIN_WRAPPER` when set — words split on spaces,
 * e.g. `wine64` or `qemu-aarch64 -L /usr/aarch64-linux-gnu` — so a cross build runs
 * against the host's mock LLM (tests/cross/).
 */
export function hearthCommand() {
  const file = process.env.HEARTH_BIN ? path.resolve(process.env.HEARTH_BIN) : binary("hearth");
  const wrapper = (process.env.HEARTH_BIN_WRAPPER ?? "").split(" ").filter(Boolean);
  return wrapper.length > 0 ? { command: wrapper[0], args: [...wrapper.slice(1), file] } : { command: file, args: [] };
}

/**
 * Whether the Hearth under test is a Windows build (`HEARTH_BIN` ends in `.exe`, run by wine):
 * it gets Windows paths, and the scenarios that need a POSIX shell are skipped.
 */
export const windowsHearth = /\.exe$/i.test(process.env.HEARTH_BIN ?? "");

/**
 * A host path as the Hearth under test names it. The one translation of the suite: wine maps
 * the host's `/` to drive `Z:`, so a Windows Hearth gets `Z:\tmp\...`; any other Hearth the path
 * as is.
 * @param {string} file an absolute host path
 */
export function hearthPath(file) {
  return windowsHearth ? `Z:${file.replaceAll("/", "\\")}` : file;
}

/**
 * Why a command that does not exist cannot be reported as such by this Hearth, or null. qemu-user
 * runs glibc's posix_spawn (a clone sharing memory with the parent until exec) as a plain
 * fork, so the child's failed exec never reaches the parent: Hearth sees a spawn that worked
 * and a child exiting 127.
 */
export const spawnErrorsLost = /qemu-/.test(process.env.HEARTH_BIN_WRAPPER ?? "")
  ? "under qemu-user a failed exec is not reported to Hearth (posix_spawn runs as a plain fork): the child exits 127"
  : null;
