//! The leaf of who a subagent's events and requests belong to: the `task` call that runs it,
//! on its parent's session. The turn (`agent/child.rs`) makes it, the log format
//! (`acp/updates.rs`) writes it into `_meta`, and a permission ask carries it.

/// Which `task` call a subagent's event or request belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildLink {
    /// The `task` call's id, on the parent's session.
    pub parent_tool_call_id: String,
    pub child_session_id: String,
    pub agent: String,
    /// 1 for a child of the client's session.
    pub depth: u32,
    /// The session of the child that delegated, for a grandchild (depth 2 and deeper): a
    /// client showing subagents as child sessions sees it announced there, not on the
    /// client's session. `None` for a child of the client's session.
    pub delegating_session_id: Option<String>,
}
