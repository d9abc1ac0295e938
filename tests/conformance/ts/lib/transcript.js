// The exact bytes exchanged with the agent, split into lines, in the order they passed.
//
// The official SDK parses (and silently drops or normalises) what it reads, so the tests
// tee the raw streams *under* `ndJsonStream`: validation and ordering checks see what
// Hearth actually wrote, not what the SDK made of it.

/** @typedef {{ seq: number, direction: "in" | "out", line: string, frame?: any, problem?: string }} Entry */

export class Transcript {
  constructor() {
    /** @type {Entry[]} */
    this.entries = [];
    /** @type {Map<string, string>} JSON of a request id the client sent → its method */
    this.sentMethods = new Map();
    this.pending = { in: Buffer.alloc(0), out: Buffer.alloc(0) };
  }

  /** The agent's stdout, recorded as it is read. */
  teeIncoming(readable) {
    return readable.pipeThrough(this.recorder("in"));
  }

  /** A writable for the client's frames that records them and forwards to the agent's stdin. */
  teeOutgoing(writable) {
    const tee = this.recorder("out");
    tee.readable.pipeTo(writable).catch(() => {}); // the agent going away is seen elsewhere
    return tee.writable;
  }

  recorder(direction) {
    return new TransformStream({
      transform: (chunk, controller) => {
        this.push(direction, chunk);
        controller.enqueue(chunk);
      },
      flush: () => this.finish(direction),
    });
  }

  push(direction, chunk) {
    let buffer = Buffer.concat([this.pending[direction], chunk]);
    for (let nl = buffer.indexOf(0x0a); nl >= 0; nl = buffer.indexOf(0x0a)) {
      this.record(direction, buffer.subarray(0, nl));
      buffer = buffer.subarray(nl + 1);
    }
    this.pending[direction] = buffer;
  }

  finish(direction) {
    const rest = this.pending[direction];
    if (rest.length > 0) this.record(direction, rest, "line not terminated by \\n at end of stream");
    this.pending[direction] = Buffer.alloc(0);
  }

  record(direction, bytes, problem) {
    /** @type {Entry} */
    const entry = { seq: this.entries.length, direction, line: "" };
    try {
      entry.line = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      entry.frame = JSON.parse(entry.line);
    } catch (e) {
      entry.line ||= bytes.toString("latin1");
      problem ??= `not a JSON frame: ${e.message}`;
    }
    if (problem) entry.problem = problem;
    if (direction === "out" && entry.frame?.method !== undefined && Object.hasOwn(entry.frame, "id")) {
      this.sentMethods.set(JSON.stringify(entry.frame.id), entry.frame.method);
    }
    this.entries.push(entry);
  }

  /** @returns {Entry[]} the agent's frames */
  incoming() {
    return this.entries.filter((e) => e.direction === "in");
  }

  /** The last request the client sent with this method (and session id, if given). */
  lastRequest(method, sessionId) {
    return this.entries.findLast(
      (e) =>
        e.direction === "out" &&
        e.frame?.method === method &&
        Object.hasOwn(e.frame, "id") &&
        (sessionId === undefined || e.frame.params?.sessionId === sessionId),
    );
  }

  /** The agent's answer to a request entry. */
  responseTo(request) {
    return this.entries.find(
      (e) =>
        e.direction === "in" &&
        e.seq > request.seq &&
        e.frame?.method === undefined &&
        JSON.stringify(e.frame?.id) === JSON.stringify(request.frame.id),
    );
  }

  /** `session/update` params for one session that the agent wrote strictly between two entries. */
  updatesBetween(sessionId, from, to = { seq: Infinity }) {
    return this.entries
      .filter((e) => e.direction === "in" && e.seq > from.seq && e.seq < to.seq)
      .map((e) => e.frame)
      .filter((f) => f?.method === "session/update" && f.params?.sessionId === sessionId)
      .map((f) => f.params.update);
  }

  /**
   * Every schema problem in what the agent wrote, one string per bad line.
   * @param {import("./schema.js").AcpSchema | import("./schema.js").FrameSchemas} schema
   */
  schemaProblems(schema) {
    const methodOf = (id) => this.sentMethods.get(JSON.stringify(id));
    const problems = [];
    for (const entry of this.incoming()) {
      const found = entry.problem ? [entry.problem] : schema.problems(entry.frame, methodOf);
      if (found.length > 0) problems.push(`${found.join("; ")}\n    in: ${entry.line}`);
    }
    return problems;
  }
}
