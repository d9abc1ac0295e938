//! What a tool call touches: the files it reads or changes (with the diff), the command it
//! runs, the URL it fetches, the MCP tool it calls. `tools/` works it out before a call runs,
//! `permissions/` decides on it and `agent/` records checkpoints from it; a leaf, so none of
//! them has to import another for it.

use std::path::PathBuf;

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
