//! The port through which a running call turns to the user: a question (`ask_user`), or a
//! plan to approve (`exit_plan_mode`). The turn implements it for each call (`agent/user.rs`),
//! bound to that call, so `tools/` knows no session and no protocol.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::permissions::Mode;
use crate::question::{Question, Reply, Waiting};

/// What became of a plan submitted for approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanVerdict {
    /// Approved: the session left plan mode for this mode.
    Approved(Mode),
    /// The user wants to keep planning: the session stays in plan mode.
    KeepPlanning,
    /// The session is not in plan mode (it is in this one): nothing to approve.
    NotPlanning(Mode),
    /// Nobody answered (the turn was cancelled).
    Cancelled,
    /// The request failed (the client's words).
    Failed(String),
}

pub trait User: Send + Sync {
    /// The client's id of the call this is bound to (an MCP server's question during it
    /// names it).
    fn call_id(&self) -> &str;
    /// The session a question about the call is asked on, when not the call's session's: a
    /// subagent's own, for a client that shows subagents as child sessions.
    fn asks_on(&self) -> Option<&str>;
    /// Who is told while a question about the call waits for the user: the subagent that
    /// made the call, which says so in its state.
    fn waits(&self) -> Option<Arc<dyn Waiting>>;
    /// The session's permission mode now.
    fn mode(&self) -> Mode;
    /// Asks the user `question` on behalf of this call.
    fn ask(&self, question: Question) -> BoxFuture<'_, Reply>;
    /// Asks the user to approve `plan`, and leaves plan mode when they do.
    fn approve_plan<'a>(&'a self, plan: &'a str) -> BoxFuture<'a, PlanVerdict>;
}
