//! What a running call reports before it finishes, bound to that call: the turn
//! (`agent/calls.rs`) makes one per call, knowing its id and where its events go, so a tool
//! reports without knowing either.

use super::PlanEntry;

pub trait CallReport: Send + Sync {
    /// A piece of the call's live output (a command's terminal output), shown as it comes and
    /// not kept: the finished call carries the result.
    fn output(&self, delta: String);
    /// The model's plan, whole: it replaces the previous one (`todo`).
    fn plan(&self, entries: Vec<PlanEntry>);
    /// What the call has done so far, whole (a subagent's text): it replaces the call's shown
    /// content until the call finishes, and is not kept.
    fn progress(&self, text: String);
    /// The id the client knows the call by (a subagent's calls name it as their parent).
    fn call_id(&self) -> &str;
}
