//! The port through which a tool runs a child: a turn loop of its own, in a fresh context,
//! whose final text comes back to the tool (what the `task` tool is made of). The trait and
//! the agent types live here and the turn implements it (`agent/child.rs`), so `tools/` still
//! knows no model and no turn.

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{CallReport, ToolError};
use crate::permissions::Mode;

/// A kind of child the `task` tool can start: a built-in (`general`, `explore`) or an agent
/// file's (`session/project/agents.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentType {
    pub name: String,
    /// What the model is told it is for.
    pub description: String,
    /// The tools it may use, `None` for all of its parent's; either way never more than its
    /// parent has.
    pub tools: Option<Vec<String>>,
    /// Its model, `None` for its parent's.
    pub model: Option<String>,
    /// Its permission mode; the child runs under the stricter of it and its parent's.
    pub mode: Option<Mode>,
    /// At most this many model requests (never more than the configured limit).
    pub max_turns: Option<u32>,
    /// What its system prompt adds to the engine's.
    pub prompt: String,
}

/// What a child is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildJob {
    pub agent: AgentType,
    /// The short label the call is shown with.
    pub description: String,
    /// The user message it answers: the whole task, since it cannot see the conversation.
    pub prompt: String,
}

/// What a child that ended well hands back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildAnswer {
    /// The child's session id (what the client knows it by).
    pub child_id: String,
    /// Its final message.
    pub text: String,
    /// Its model requests, tool calls and tokens, for the call's `_meta.hearth`.
    pub tally: Tally,
}

/// What a child spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub requests: u32,
    pub tool_calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_read_tokens: u64,
}

impl Tally {
    pub fn add(&mut self, other: Tally) {
        self.requests += other.requests;
        self.tool_calls += other.tool_calls;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_read_tokens += other.cached_read_tokens;
    }
}

pub trait ChildTurns: Send + Sync {
    /// Runs a child to its end and returns its final text; `cancel` stops it. `report` is the
    /// delegating call's, for the child's progress.
    fn run<'a>(
        &'a self,
        job: ChildJob,
        report: &'a dyn CallReport,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ChildAnswer, ToolError>>;
}
