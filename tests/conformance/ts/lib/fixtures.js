// The scenario data shared with the Python suite: prompts, the mock's script, and what the
// script makes the agent stream (derived from the script, so it is written once).

import { readFileSync } from "node:fs";
import path from "node:path";
import { fixturesDir } from "./paths.js";

/** Concatenated values of one event key (`text`, `reasoning`) of a scripted response, up to a stall. */
function scripted(response, key, { untilStall = false } = {}) {
  let out = "";
  for (const event of response.events ?? []) {
    if (untilStall && "stallMs" in event) break;
    if (key in event) out += event[key];
  }
  return out;
}

/**
 * @param {string} name a file in tests/conformance/fixtures without `.json`
 */
export function loadFixture(name) {
  const data = JSON.parse(readFileSync(path.join(fixturesDir, `${name}.json`), "utf8"));
  const responses = data.script.responses;
  return {
    prompts: data.prompts,
    script: data.script,
    /** The answer text of each scripted response. */
    answers: responses.map((r) => scripted(r, "text")),
    /** The reasoning text of each scripted response. */
    thoughts: responses.map((r) => scripted(r, "reasoning")),
    /** What each response streams before its first stall. */
    beforeStall: responses.map((r) => scripted(r, "text", { untilStall: true })),
  };
}
