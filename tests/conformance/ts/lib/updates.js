// `session/update` notifications as the official client delivered them, in arrival order,
// and the small folds the tests assert on.

export class UpdateLog {
  constructor() {
    /** @type {{ sessionId: string, update: any }[]} */
    this.all = [];
    this.waiters = [];
  }

  push(params) {
    this.all.push(params);
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Updates of one session, from index `from` of the log on. */
  of(sessionId, from = 0) {
    return this.all.slice(from).filter((n) => n.sessionId === sessionId).map((n) => n.update);
  }

  /** A mark to pass as `from` later: "updates after this point". */
  mark() {
    return this.all.length;
  }

  /** Resolves once some update of the session satisfies `predicate`; rejects after `timeoutMs`. */
  waitFor(sessionId, predicate, timeoutMs) {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!this.of(sessionId).some(predicate)) return;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        reject(new Error(`no matching session/update within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(check);
      check();
    });
  }
}

/**
 * The updates that are part of the conversation: all but the command list, which is state
 * (sent after each session response and whenever it changes, never replayed).
 */
export function history(updates) {
  return updates.filter((u) => u.sessionUpdate !== "available_commands_update");
}

/** Updates of one kind (`sessionUpdate` value). */
export function ofKind(updates, kind) {
  return updates.filter((u) => u.sessionUpdate === kind);
}

/** The concatenated text of the chunks of one kind. */
export function textOf(updates, kind) {
  return ofKind(updates, kind)
    .map((u) => (u.content?.type === "text" ? u.content.text : ""))
    .join("");
}

/**
 * Message chunks folded into messages: consecutive chunks of one kind and messageId form
 * one `{kind, text}`. Other updates are skipped. This is how a client rebuilds a
 * conversation from a replay.
 */
export function messages(updates) {
  const kinds = new Set(["user_message_chunk", "agent_message_chunk", "agent_thought_chunk"]);
  const folded = [];
  for (const u of updates.filter((u) => kinds.has(u.sessionUpdate))) {
    const last = folded.at(-1);
    const text = u.content?.type === "text" ? u.content.text : "";
    if (last && last.kind === u.sessionUpdate && last.messageId === u.messageId) last.text += text;
    else folded.push({ kind: u.sessionUpdate, messageId: u.messageId, text });
  }
  return folded.map(({ kind, text }) => ({ kind, text }));
}

/** The `tool_call` and `tool_call_update`s of one tool call, in order. */
export function toolCallUpdates(updates, toolCallId) {
  return updates.filter(
    (u) => (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") && u.toolCallId === toolCallId,
  );
}

/** The statuses one tool call went through, in order (updates without a status skipped). */
export function toolCallStatuses(updates, toolCallId) {
  return toolCallUpdates(updates, toolCallId)
    .map((u) => u.status)
    .filter((status) => status != null);
}
