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

/** The tool calls of a scripted response: `{id, name, arguments}` with the arguments parsed. */
function scriptedCalls(response) {
  return (response.events ?? [])
    .filter((event) => "toolCall" in event)
    .map(({ toolCall: { id, name, arguments: args } }) => ({ id, name, arguments: JSON.parse(args) }));
}

/** `value` with every `{{name}}` in its strings replaced by `vars[name]`; an unknown name throws. */
function substitute(value, vars) {
  if (typeof value === "string") {
    return value.replace(/\{\{(\w+)\}\}/g, (_, key) => {
      if (!Object.hasOwn(vars, key)) throw new Error(`fixture placeholder {{${key}}} has no value`);
      return vars[key];
    });
  }
  if (Array.isArray(value)) return value.map((item) => substitute(item, vars));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]));
  }
  return value;
}

/**
 * @param {string} name a file in tests/conformance/fixtures without `.json`
 * @param {Record<string, string>} vars values for the fixture's `{{name}}` placeholders
 */
export function loadFixture(name, vars = {}) {
  const raw = JSON.parse(readFileSync(path.join(fixturesDir, `${name}.json`), "utf8"));
  const data = substitute(raw, vars);
  const responses = data.script.responses;
  return {
    prompts: data.prompts,
    script: data.script,
    /** Extra keys for Hearth's config file (e.g. `permissionMode`). */
    config: data.config ?? {},
    /** ACP `mcpServers` entries for the scenario's sessions. */
    mcpServers: data.mcpServers ?? [],
    /** The answer text of each scripted response. */
    answers: responses.map((r) => scripted(r, "text")),
    /** The reasoning text of each scripted response. */
    thoughts: responses.map((r) => scripted(r, "reasoning")),
    /** What each response streams before its first stall. */
    beforeStall: responses.map((r) => scripted(r, "text", { untilStall: true })),
    /** The tool calls of each scripted response. */
    toolCalls: responses.map(scriptedCalls),
  };
}
