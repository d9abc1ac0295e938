//! The port through which a tool runs a child turn: a model turn of its own, in a fresh
//! context, whose final text comes back to the tool (what a subagent tool is made of). The
//! trait lives here and the turn implements it (`agent/child.rs`), so `tools/` still knows
//! no model and no turn.

#![expect(
    dead_code,
    reason = "the port's first caller is the subagent tool (issue 21)"
)]

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::ToolError;

/// What a child turn is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildPrompt {
    /// Its system prompt; `None` for the engine's own.
    pub system: Option<String>,
    /// The user message it answers.
    pub prompt: String,
}

pub trait ChildTurns: Send + Sync {
    /// Runs one child turn to its end and returns its final text; `cancel` stops it.
    fn run<'a>(
        &'a self,
        prompt: ChildPrompt,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<String, ToolError>>;
}
