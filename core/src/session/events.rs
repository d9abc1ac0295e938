//! What a session reports: typed events, emitted to a sink. The session is the sink of its own
//! turns (it logs each event and sends it to the client); how an event looks on the wire and in
//! the log is the protocol edge's business, behind `EventFormat`.

use serde_json::Value;

use super::Settings;
use crate::chat::{Message, UserPart};
use crate::llm::Usage;
use crate::permissions::Mode;
use crate::tools::{Diff, Kind, Location, PlanEntry, ToolContent};

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
    ToolCallFinished {
        id: String,
        outcome: ToolOutcome,
    },
    Plan(Vec<PlanEntry>),
    /// A compaction of the model's context began or ended (for clients that show
    /// compactions; others see it as a tool call).
    Compaction {
        id: String,
        status: CompactionStatus,
        /// Why it failed.
        error: Option<String>,
        /// Its figures, once it completed.
        figures: Option<CompactionFigures>,
    },
    /// A piece of a compaction's summary, as the model writes it.
    CompactionChunk {
        id: String,
        text: String,
    },
    /// How full the context window is, in tokens, and the last request's counts when the
    /// provider gave them (how much of its prompt the provider's cache served).
    Usage {
        used: u64,
        size: u64,
        request: Option<Usage>,
    },
    Title {
        title: String,
        updated_at: String,
    },
    ConfigChanged(Settings),
    ModeChanged(Mode),
    /// The commands a prompt can run now (the complete list each time).
    AvailableCommands(Vec<AvailableCommand>),
    /// A warning for the user, for clients that show notices.
    Notice {
        title: String,
        description: String,
    },
    /// Something the session depends on failed (an MCP server), shown as a failed tool call
    /// to clients without notices.
    ServiceFailed {
        id: String,
        title: String,
        message: String,
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
    },
    Failed(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionStatus {
    InProgress,
    Completed,
    Failed,
    Cancelled,
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
}

/// How events are logged and sent — the stored log is ACP v1 `session/update` JSON, the format
/// the protocol edge owns — and what the domain needs to read back from a logged update.
pub trait EventFormat: Send + Sync {
    /// The logged (and, when live, sent) form of `event`.
    fn encode(&self, event: SessionEvent) -> Value;
    /// The notification that carries a logged update to the client.
    fn frame(&self, session_id: &str, update: &Value) -> String;
    /// What a logged update says, as far as the model's context and crash recovery care.
    fn decode(&self, update: &Value) -> Recorded;
}

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
