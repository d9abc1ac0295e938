// Processes on this machine, found by their command line (`pgrep -af`) or by pid: how the
// tests see whether a command's process tree (or an MCP server) is still alive.

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
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

/** Whether a process runs (a zombie runs nothing: it counts as gone). */
export function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

/** The pids an MCP test server appended to its `MCP_TEST_PIDFILE` (`server PID` lines). */
export function pidsIn(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .map((line) => Number(line.trim().split(/\s+/).at(-1)))
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

/** Polls until none of `pids` runs or `timeoutMs` passes; returns those still running. */
export async function pollGone(pids, timeoutMs) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const running = pids.filter(alive);
    if (running.length === 0 || Date.now() >= until) return running;
    await sleep(50);
  }
}
