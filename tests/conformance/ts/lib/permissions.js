// The client's side of `session/request_permission`: what a user clicking in an editor would
// do, scripted. A test queues the answer (an option kind) before the prompt; the official
// client's request handler calls answer() with the params as the SDK delivered them.

export class PermissionDesk {
  constructor() {
    /** Every request's params, in arrival order. */
    this.requests = [];
    /** Option kinds to pick, one per coming request. */
    this.choices = [];
  }

  /** Answer the next request with the offered option of this kind (`allow_once`, `reject_once`…). */
  choose(kind) {
    this.choices.push(kind);
  }

  /** @returns {import("@agentclientprotocol/sdk").RequestPermissionResponse} */
  answer(params) {
    this.requests.push(params);
    const kind = this.choices.shift();
    // Unexpected or unanswerable: dismiss it, as closing the dialog would. The test sees
    // the extra request (and the dismissal) in its assertions.
    const option = kind && params.options?.find((o) => o.kind === kind);
    if (!option) return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  }
}
