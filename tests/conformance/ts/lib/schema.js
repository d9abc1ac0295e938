// Validates frames an ACP agent writes against the official ACP JSON schema.
//
// Which definition applies to a frame is read from the schema itself: the `AgentRequest`,
// `AgentResponse` and `AgentNotification` envelopes reference the per-method definitions,
// and each of those carries `x-method` (the JSON-RPC method) and `x-side` (who handles
// that method). So nothing here names `SessionNotification` or `PromptResponse`: a new
// method in a newer schema is picked up without touching this file.

import { readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { fixturesDir, schemaPath, unstableSchemaPath } from "./paths.js";

const SCHEMA_ID = "urn:acp:schema";

/** Every `$ref` target name under `node`, without following the refs. */
function refsUnder(node, found = new Set()) {
  if (Array.isArray(node)) {
    for (const item of node) refsUnder(item, found);
  } else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string" && value.startsWith("#/$defs/")) {
        found.add(value.slice("#/$defs/".length));
      } else {
        refsUnder(value, found);
      }
    }
  }
  return found;
}

/**
 * Keywords outside JSON Schema that the schema uses as annotations: its own `x-…` keys and
 * OpenAPI's `discriminator` (the `oneOf` beside it already does the validating). Ajv in
 * strict mode must be told of them; anything else unknown stays an error.
 */
function annotationKeywords(node, found = new Set(["discriminator"])) {
  if (Array.isArray(node)) {
    for (const item of node) annotationKeywords(item, found);
  } else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith("x-")) found.add(key);
      annotationKeywords(value, found);
    }
  }
  return found;
}

/**
 * method → definition name, for the definitions an envelope references whose `x-side`
 * is `side`. Throws if the envelope's definitions disagree with `side`: then the schema
 * does not mean what this validator assumes.
 */
function methodTable(defs, envelope, side) {
  const table = new Map();
  for (const name of refsUnder(defs[envelope])) {
    const def = defs[name];
    if (!def["x-method"]) continue;
    if (def["x-side"] !== side) {
      throw new Error(`${envelope} references ${name} with x-side ${def["x-side"]}, expected ${side}`);
    }
    table.set(def["x-method"], name);
  }
  if (table.size === 0) throw new Error(`no x-method definitions under ${envelope}`);
  return table;
}

/** Registers the schema's non-standard formats from the table shared with Python. */
function addFormats(ajv) {
  const formats = JSON.parse(readFileSync(path.join(fixturesDir, "schema-formats.json"), "utf8"));
  for (const [name, [min, max]] of Object.entries(formats.integers)) {
    ajv.addFormat(name, { type: "number", validate: (n) => Number.isInteger(n) && n >= min && n <= max });
  }
  for (const name of formats.numbers) {
    ajv.addFormat(name, { type: "number", validate: (n) => Number.isFinite(n) });
  }
  const uri = new RegExp(formats.uriPattern);
  ajv.addFormat("uri", { type: "string", validate: (s) => uri.test(s) });
}

export class AcpSchema {
  /** @param {object} schema the parsed ACP schema.json */
  constructor(schema) {
    const defs = schema.$defs;
    this.ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
    for (const keyword of annotationKeywords(schema)) this.ajv.addKeyword(keyword);
    addFormats(this.ajv);
    this.ajv.addSchema(schema, SCHEMA_ID);

    // What the agent sends: responses to methods the agent handles; requests and
    // notifications for methods the client handles.
    this.responses = methodTable(defs, "AgentResponse", "agent");
    this.requests = methodTable(defs, "AgentRequest", "client");
    this.notifications = methodTable(defs, "AgentNotification", "client");

    const agentIndex = schema.anyOf.findIndex((branch) => branch.title === "Agent");
    if (agentIndex < 0) throw new Error("schema has no top-level `Agent` message branch");
    this.envelopePointer = `#/anyOf/${agentIndex}`;
  }

  static load(file = schemaPath) {
    return new AcpSchema(JSON.parse(readFileSync(file, "utf8")));
  }

  /** Errors of `value` against the schema node at `pointer` ("" when valid). */
  check(pointer, value) {
    const validate = this.ajv.getSchema(`${SCHEMA_ID}${pointer}`);
    if (!validate) throw new Error(`no schema at ${pointer}`);
    return validate(value) ? "" : this.ajv.errorsText(validate.errors, { dataVar: "frame" });
  }

  /**
   * Problems with one frame the agent wrote, as readable strings (empty when valid).
   * @param {any} frame the parsed frame
   * @param {(id: unknown) => string | undefined} methodOfRequest the method of a request
   *   the client sent, by id, to pick the response type
   */
  problems(frame, methodOfRequest) {
    const problems = [];
    const envelope = this.check(this.envelopePointer, frame);
    if (envelope) problems.push(`not an ACP agent message: ${envelope}`);
    const specific = this.specificDefinition(frame, methodOfRequest);
    if (specific.problem) problems.push(specific.problem);
    if (specific.name) {
      const errors = this.check(`#/$defs/${specific.name}`, specific.value);
      if (errors) problems.push(`${specific.name}: ${errors}`);
    }
    return problems;
  }

  /** Which definition the frame's payload must satisfy, or why none can be chosen. */
  specificDefinition(frame, methodOfRequest) {
    if (!frame || typeof frame !== "object" || Array.isArray(frame)) {
      return { problem: "a frame must be a JSON object" };
    }
    const hasId = Object.hasOwn(frame, "id");
    if (typeof frame.method === "string") {
      const table = hasId ? this.requests : this.notifications;
      if (frame.method.startsWith("_")) return {}; // extension methods have no schema
      const name = table.get(frame.method);
      if (!name) return { problem: `agent sent unknown ${hasId ? "request" : "notification"} ${frame.method}` };
      return { name, value: frame.params };
    }
    if (Object.hasOwn(frame, "error")) return { name: "Error", value: frame.error };
    if (Object.hasOwn(frame, "result")) {
      const method = methodOfRequest(frame.id);
      if (!method) return { problem: `response to an id the client never used: ${JSON.stringify(frame.id)}` };
      if (method.startsWith("_")) return {};
      const name = this.responses.get(method);
      if (!name) return { problem: `no response type for method ${method}` };
      return { name, value: frame.result };
    }
    return { problem: "neither a request, a notification nor a response" };
  }
}

/**
 * The unstable methods Hearth serves. The stable schema has no types for them, so the answers
 * to them are checked against the unstable schema; every other frame, the notifications these
 * methods cause included, is held to the stable one.
 */
export const UNSTABLE_METHODS = new Set(["session/fork", "session/set_title"]);

/** Picks the schema for each frame: the stable one, or the unstable one for `UNSTABLE_METHODS`. */
export class FrameSchemas {
  constructor(stable, unstable) {
    this.stable = stable;
    this.unstable = unstable;
  }

  static load() {
    return new FrameSchemas(AcpSchema.load(), AcpSchema.load(unstableSchemaPath));
  }

  /** As `AcpSchema.problems`. */
  problems(frame, methodOfRequest) {
    const answered = frame && typeof frame === "object" && !Object.hasOwn(frame, "method");
    const method = answered ? methodOfRequest(frame.id) : undefined;
    return (UNSTABLE_METHODS.has(method) ? this.unstable : this.stable).problems(frame, methodOfRequest);
  }
}
