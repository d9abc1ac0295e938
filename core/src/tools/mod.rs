//! The agent's tools. Each tool is one file; `contract.rs` holds what a tool is, `registry.rs`
//! the set a session offers, and this module the types a call is made of.
//!
//! A call goes through two steps so the engine can ask permission in between:
//! `prepare` validates the input and works out what the call will touch (paths, the diff of
//! an edit, the command line), without side effects; `run` performs it, reporting as it goes
//! through the call's [`CallReport`].

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::chat::Image;
use crate::io::{Io, IoError};

mod ask_user;
mod bounds;
mod child;
mod contract;
mod diffs;
mod edit;
mod exit_plan_mode;
mod fetch;
mod fetch_guard;
mod glob;
mod grep;
mod html;
mod input;
mod limits;
mod line_endings;
mod list;
pub mod lsp;
pub mod mcp;
mod paths;
mod read;
mod read_image;
pub mod registry;
mod report;
mod run_command;
mod schema;
pub mod skill;
mod task;
#[cfg(test)]
mod testing;
mod todo;
mod user;
mod walk;
pub mod web_search;
mod write;

pub use crate::access::{Access, Diff};
pub use ask_user::NAME as ASK_USER;
pub use child::{AgentType, ChildAnswer, ChildJob, ChildTurns, Tally};
pub use contract::{About, AnyTool, Planned, Ready, Tool, erase};
pub use exit_plan_mode::NAME as EXIT_PLAN_MODE;
pub use limits::Limits;
pub use registry::{Registry, ToolDeps};
pub use report::CallReport;
pub use skill::{NAME as SKILL, Shelf, SkillEntry};
pub use task::builtin_agents;
pub use user::{PlanVerdict, User};
pub use web_search::NAME as WEB_SEARCH;

/// ACP `ToolKind` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Read,
    Edit,
    Search,
    Execute,
    Think,
    Fetch,
    /// Changes the session's mode (`exit_plan_mode`).
    SwitchMode,
    /// None of the above: an MCP server's tool that does not say it only reads.
    Other,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Edit => "edit",
            Kind::Search => "search",
            Kind::Execute => "execute",
            Kind::Think => "think",
            Kind::Fetch => "fetch",
            Kind::SwitchMode => "switch_mode",
            Kind::Other => "other",
        }
    }
}

/// A location for the client's follow-along (absolute path, 1-based line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    pub line: Option<u32>,
}

/// A plan entry (`todo` tool → ACP `plan` update).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanEntry {
    pub content: String,
    /// `high`, `medium` or `low`.
    pub priority: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
}

/// What a finished call shows the user, besides its status (ACP `ToolCallContent`, whose wire
/// form `acp/` builds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolContent {
    Text(String),
    Diff(Diff),
    /// A terminal of the client's that ran the command.
    Terminal(String),
    /// An image (base64 `data`) for the client to show.
    Image {
        mime_type: String,
        data: String,
    },
    /// A link to a resource (a search result): ACP's `resource_link`.
    Link {
        uri: String,
        name: String,
        description: Option<String>,
    },
}

/// The result of a call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    /// What the model reads.
    pub for_model: String,
    /// What the final tool call update shows.
    pub content: Vec<ToolContent>,
    pub raw_output: Option<Value>,
    /// Images for the model to look at (only when `Context::vision`).
    pub images: Vec<Image>,
    /// What the final tool call update carries in `_meta.hearth` (`run_command`: its
    /// sandbox: backend, policy, what was denied).
    pub meta: Option<Value>,
}

/// A tool failure: the message goes back to the model, which may try again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(pub String);

/// What a tool's steps return: a [`ToolError`] for the model unless said otherwise.
pub type Result<T, E = ToolError> = std::result::Result<T, E>;

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<IoError> for ToolError {
    fn from(error: IoError) -> Self {
        ToolError(error.0)
    }
}

/// Where and how a call runs.
#[derive(Clone)]
pub struct Context {
    /// The session's working directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// `cwd` and the additional directories.
    pub roots: Vec<PathBuf>,
    pub io: Arc<dyn Io>,
    pub limits: Limits,
    pub cancel: CancellationToken,
    /// Whether the session's model takes images (`read` of an image file).
    pub vision: bool,
    /// The sandbox of the commands `run_command` starts (the user's settings, Hearth's own
    /// directories).
    pub sandbox: Arc<crate::sandbox::Setup>,
    /// The session's language servers (the `lsp_*` tools, and the diagnostics of edits).
    pub lsp: Arc<crate::lsp::Lsp>,
    /// Runs a child for the `task` tool (`None` where no model is at hand, or the child may
    /// not delegate further).
    pub children: Option<Arc<dyn ChildTurns>>,
    /// The session's skills now (the `skill` tool).
    pub skills: Arc<Shelf>,
    /// The user, as this call reaches them (questions, plan approval); `None` where no one
    /// can be asked.
    pub user: Option<Arc<dyn User>>,
}
