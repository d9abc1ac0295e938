// The MCP test servers (tests/mcp): where their Python and `server.py` are. run.sh runs
// `tests/mcp/setup.sh` and exports its `MCP_TEST_*` lines; run alone, the suite runs the
// script itself (it installs only what changed, and prints the paths one `KEY=VALUE` a line).

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./paths.js";

const SETUP = path.join(repoRoot, "tests/mcp/setup.sh");
/** A first install (venv + npm ci) takes a while; an unchanged one about 2 s. */
const SETUP_TIMEOUT_MS = 300_000;

let located;

/** `{ python, server }`: the interpreter of tests/mcp/.venv and tests/mcp/server.py. */
export function mcpTestServers() {
  located ??= locate();
  return located;
}

function locate() {
  let vars = process.env;
  if (!vars.MCP_TEST_PYTHON || !vars.MCP_TEST_SERVER) {
    const run = spawnSync("bash", [SETUP], { encoding: "utf8", timeout: SETUP_TIMEOUT_MS });
    if (run.error || run.status !== 0) {
      throw new Error(`bash ${SETUP} failed (${run.error?.message ?? `exit ${run.status}`}):\n${run.stderr}`);
    }
    vars = Object.fromEntries(
      run.stdout
        .split("\n")
        .map((line) => line.match(/^(MCP_TEST_\w+)=(.*)$/))
        .filter(Boolean)
        .map(([, key, value]) => [key, value]),
    );
  }
  const found = { python: vars.MCP_TEST_PYTHON, server: vars.MCP_TEST_SERVER };
  for (const [what, file] of Object.entries(found)) {
    if (!file || !existsSync(file)) throw new Error(`MCP test ${what} not found (${file}): run \`bash ${SETUP}\``);
  }
  return found;
}
