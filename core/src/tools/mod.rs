//! The agent's tools. Each tool is one file; this module holds the contract and the registry.
//!
//! A call goes through two steps so the engine can ask permission in between:
//! `prepare` validates the input and works out what the call will touch (paths, the diff of
//! an edit, the command line), without side effects; `run` performs it.

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::chat::{Image, ToolSpec};
use crate::io::{Io, IoError};

mod bounds;
mod diffs;
mod edit;
mod fetch;
mod glob;
mod grep;
mod html;
mod input;
mod limits;
mod list;
pub mod lsp;
pub mod mcp;
mod paths;
mod read;
mod read_image;
pub mod registry;
mod run_command;
pub mod server_process;
#[cfg(test)]
mod testing;
mod todo;
mod walk;
mod write;

pub use limits::Limits;
pub use registry::{Registry, ToolDeps};

/// ACP `ToolKind` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Read,
    Edit,
    Search,
    Execute,
    Think,
    Fetch,
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
            Kind::Other => "other",
        }
    }
}

/// A file change, for the `diff` content block (permission request and tool call).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diff {
    pub path: PathBuf,
    /// `None` for a new file.
    pub old_text: Option<String>,
    pub new_text: String,
}

/// What a prepared call will do, which decides whether permission is needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Reads (or searches) these absolute paths.
    Read(Vec<PathBuf>),
    /// Changes files; one diff per file.
    Edit(Vec<Diff>),
    /// Runs a shell command line.
    Execute(String),
    /// Fetches a URL.
    Network(String),
    /// Calls `tool` of the MCP server `server` (their own names, not the model's), which may do
    /// anything the server can; `read_only` is the tool's `readOnlyHint`.
    External {
        server: String,
        tool: String,
        read_only: bool,
    },
    /// Touches nothing outside the engine (e.g. the plan).
    None,
}

/// A location for the client's follow-along (absolute path, 1-based line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    pub line: Option<u32>,
}

/// A validated call, ready to run.
pub struct Prepared {
    /// Human title, e.g. "Read src/main.rs (lines 1–200)".
    pub title: String,
    pub locations: Vec<Location>,
    pub access: Access,
    /// Whatever `run` needs, opaque to the engine.
    pub state: Box<dyn std::any::Any + Send + Sync>,
}

impl Prepared {
    pub fn new(
        title: String,
        locations: Vec<Location>,
        access: Access,
        state: impl std::any::Any + Send + Sync,
    ) -> Self {
        Prepared {
            title,
            locations,
            access,
            state: Box::new(state),
        }
    }

    /// The state `prepare` left for `run`.
    pub fn into_state<S: 'static>(self) -> Result<S, ToolError> {
        self.state
            .downcast()
            .map(|state| *state)
            .map_err(|_| ToolError("internal error: this call was prepared by another tool".into()))
    }
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
}

/// The result of a call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    /// What the model reads.
    pub for_model: String,
    /// What the final tool call update shows.
    pub content: Vec<ToolContent>,
    pub raw_output: Option<Value>,
    /// A new plan, when the tool maintains it.
    pub plan: Option<Vec<PlanEntry>>,
    /// Images for the model to look at (only when `Context::vision`).
    pub images: Vec<Image>,
}

/// A tool failure: the message goes back to the model, which may try again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(pub String);

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
    /// The session's language servers (the `lsp_*` tools, and the diagnostics of edits).
    pub lsp: Arc<lsp::Lsp>,
}

pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    fn kind(&self) -> Kind;
    /// Validates `input` and works out what the call will touch. No side effects.
    fn prepare<'a>(
        &'a self,
        input: &'a Value,
        ctx: &'a Context,
    ) -> BoxFuture<'a, Result<Prepared, ToolError>>;
    /// Performs a prepared call. Commands stream output deltas to `progress`.
    fn run<'a>(
        &'a self,
        prepared: Prepared,
        ctx: &'a Context,
        progress: UnboundedSender<String>,
    ) -> BoxFuture<'a, Result<Output, ToolError>>;
    /// Releases what the tool holds for its session (a server's process, a connection): the
    /// session is closing. The built-in tools hold nothing.
    fn shutdown(&self) {}
}
