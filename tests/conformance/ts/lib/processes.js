// Processes on this machine, found by their command line (`pgrep -af`): how the tests see
// whether a command's process tree is still alive.

import { spawnSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";

/** `"<pid> <command line>"` of every process whose command line matches `pattern` (a regex). */
export function processesMatching(pattern) {
  const result = spawnSync("pgrep", ["-af", pattern], { encoding: "utf8" });
  if (result.error) throw new Error(`pgrep: ${result.error.message}`);
  if (result.status === 1) return []; // none matched
  if (result.status !== 0) throw new Error(`pgrep exited ${result.status}: ${result.stderr}`);
  return result.stdout.split("\n").filter(Boolean);
}

/**
 * Polls until `done(processesMatching(pattern))` holds or `timeoutMs` passes; returns the
 * last list either way, for the caller to assert on.
 */
export async function pollProcesses(pattern, done, timeoutMs) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = processesMatching(pattern);
    if (done(found) || Date.now() >= until) return found;
    await sleep(50);
  }
}
