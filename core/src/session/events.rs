//! What a session reports: typed events, emitted to a sink. The session is the sink of its own
//! turns (it logs each event and sends it to the client); how an event looks in the log is the
//! `LogFormat`'s business, and what a client is shown of it — including the stand-ins for what
//! the client cannot show — the connection's `Wire` (both ports in `context.rs`, implemented by
//! the protocol edge).

use std::sync::Arc;

use serde_json::Value;

use super::Settings;
use crate::chat::{Message, UserPart};
pub use crate::lineage::ChildLink;
use crate::llm::Usage;
use crate::permissions::Mode;
use crate::question::Waiting;
use crate::tools::{Diff, Kind, Location, PlanEntry, ToolContent};

/// An amount of money (or of a provider's credits).
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    pub amount: f64,
    pub currency: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    /// One block of the user's prompt, as the client sent it (opaque to the domain). A
    /// command's (`/compact`) is replayed but is not the model's to read.
    UserChunk {
        message_id: String,
        content: Value,
        for_model: bool,
    },
    MessageChunk {
        message_id: String,
        text: String,
    },
    ThoughtChunk {
        message_id: String,
        text: String,
    },
    ToolCallStarted(ToolCallStart),
    /// A call that failed before it could be prepared (unknown tool, bad input).
    ToolCallRejected {
        id: String,
        name: String,
        raw_input: Value,
        message: String,
    },
    ToolCallRunning {
        id: String,
    },
    /// Live output of a running command (not logged: the final update carries the result).
    ToolCallOutput {
        id: String,
        delta: String,
    },
    /// The model has said nothing for `waited` (not logged): the session is alive as of
    /// `updated_at`.
    ModelSilent {
        waited: std::time::Duration,
        updated_at: String,
    },
    /// A running call that has said nothing for a while is still running (not logged): so
    /// that a client's idle timeout never ends a healthy turn.
    ToolCallAlive {
        id: String,
        elapsed: std::time::Duration,
    },
    ToolCallFinished {
        id: String,
        outcome: ToolOutcome,
    },
    /// What a running call has done so far, whole (a subagent's text): replaces the call's
    /// shown content until it finishes (not logged: the final update carries the result).
    ToolCallProgress {
        id: String,
        text: String,
    },
    /// An event of a subagent's, shown on its parent's session as part of the `task` call
    /// that runs it.
    Child {
        link: ChildLink,
        event: Box<SessionEvent>,
    },
    /// The task a subagent was given, as a message from the session that delegated (never
    /// logged; shown only by a client that shows subagents as child sessions).
    Delegated {
        link: ChildLink,
        /// The delegating session, as the client knows it.
        from: String,
        prompt: String,
    },
    /// A subagent's work state (never logged): for a client that shows subagents as child
    /// sessions, the first one announces the child.
    SubagentState {
        link: ChildLink,
        /// The `task` call's label.
        title: String,
        state: ChildState,
    },
    Plan(Vec<PlanEntry>),
    /// A compaction of the model's context began. Like the other compaction events, a client
    /// that does not show compactions is shown a tool call instead (the connection's `Wire`).
    CompactionStarted {
        id: String,
        trigger: CompactionTrigger,
    },
    /// A piece of a compaction's summary, as the model writes it.
    CompactionChunk {
        id: String,
        text: String,
    },
    /// The compaction completed: the summary the context now opens with, and its figures.
    CompactionCompleted {
        id: String,
        summary: String,
        figures: CompactionFigures,
    },
    /// The compaction did not happen: `message` says why, and that the context is unchanged.
    CompactionEnded {
        id: String,
        end: CompactionEnd,
        message: String,
    },
    /// How full the context window is, in tokens, and the last request's counts when the
    /// provider gave them (how much of its prompt the provider's cache served).
    Usage {
        used: u64,
        size: u64,
        request: Option<Usage>,
        /// What the session spent so far, when its model has a price.
        cost: Option<Cost>,
    },
    Title {
        title: String,
        updated_at: String,
    },
    ConfigChanged(Settings),
    ModeChanged(Mode),
    /// The commands a prompt can run now (the complete list each time).
    AvailableCommands(Vec<AvailableCommand>),
    /// A warning for the user, outside the conversation (a client without notices reads it as
    /// a line of agent message).
    Notice {
        title: String,
        description: String,
    },
    /// The turn failed at its model provider (`failure.rs`): an error notice, or JetBrains'
    /// `sessionFailure` when the wire sets `air` for a client that declared it (neither is
    /// logged); a line of agent message, logged, for a client without notices.
    TurnFailed {
        failure: super::failure::TurnFailure,
        air: bool,
    },
    /// Something the session depends on failed (an MCP server): a notice for clients that
    /// show notices, else a failed tool call named after it (`id`).
    ServiceFailed {
        id: String,
        title: String,
        message: String,
    },
}

/// What a subagent is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildState {
    Running,
    /// Waiting for the user (a permission request).
    RequiresAction,
    /// Its work ended: why (an ACP stop reason), and what it spent.
    Idle {
        stop_reason: &'static str,
        usage: crate::tools::Tally,
    },
}

/// One command the user can run by starting a prompt with `/name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvailableCommand {
    pub name: String,
    pub description: String,
    /// What to type after the name, for a command that takes input.
    pub hint: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallStart {
    pub id: String,
    pub title: String,
    pub kind: Kind,
    pub locations: Vec<Location>,
    /// The arguments as the model sent them.
    pub raw_input: Value,
    pub name: String,
    /// The change an edit will make, shown before it runs.
    pub diffs: Vec<Diff>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    Completed {
        content: Vec<ToolContent>,
        raw_output: Option<Value>,
        /// What the tool adds to the update's `_meta.hearth` (`run_command`: its sandbox).
        meta: Option<Value>,
    },
    Failed(String),
}

/// Why a compaction did not happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionEnd {
    Cancelled,
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionFigures {
    pub trigger: CompactionTrigger,
    /// The context's estimated size before and after, in tokens.
    pub tokens_before: u64,
    pub tokens_after: u64,
}

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionTrigger {
    /// The next request would pass the threshold of the model's window.
    Automatic,
    /// The user asked (`/compact`).
    Manual,
    /// The provider refused a request as longer than the window.
    Overflow,
}

impl CompactionTrigger {
    pub fn name(self) -> &'static str {
        match self {
            CompactionTrigger::Automatic => "automatic",
            CompactionTrigger::Manual => "manual",
            CompactionTrigger::Overflow => "overflow",
        }
    }
}

/// Who sees an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// Sent now and replayed later.
    Live,
    /// Kept for replay but not sent now (the user's own prompt; fixes after a crash).
    ReplayOnly,
    /// Sent now, never kept (live command output).
    Transient,
}

/// Where a turn's events go. `remember` keeps what only the model needs.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: SessionEvent, visibility: Visibility);
    fn remember(&self, message: Message);
    /// The `task` call whose subagent emits here (`None`: the session's own turn).
    fn subagent(&self) -> Option<ChildLink> {
        None
    }
    /// Who is told while a permission request or a question of the turn's calls waits for
    /// the user: a subagent, which says so in its state (`None`: nobody).
    fn waits(&self) -> Option<Arc<dyn Waiting>> {
        None
    }
}

/// What a logged update says, as far as the model's context and crash recovery care
/// (`LogFormat::decode`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// A block of a user prompt, as the model reads it.
    UserPart {
        message_id: Option<String>,
        part: UserPart,
    },
    /// A block of a command's prompt (`/compact`): not the model's, but a prompt of the
    /// session all the same (a rewind may name it).
    Command {
        message_id: Option<String>,
    },
    /// A tool call announced (`announced`) or updated, with its status if the update set one.
    ToolCall {
        id: String,
        announced: bool,
        status: Option<CallStatus>,
    },
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
}

impl CallStatus {
    pub fn is_final(self) -> bool {
        matches!(self, CallStatus::Completed | CallStatus::Failed)
    }
}
