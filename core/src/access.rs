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
    /// Runs a shell command line with more than the sandbox grants, for this run only: what
    /// the model asked for (`run_command`'s `sandbox: "widen" | "escalate"`), which only the
    /// user can approve.
    Escalate(Escalation),
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

/// A command that asks to run beyond the sandbox, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    pub command: String,
    /// The model's one-line reason, shown to the user in the request.
    pub justification: String,
    pub scope: Scope,
}

/// How far beyond the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The sandbox, with the network on (if `network`) and `writable` (absolute) writable.
    Widen {
        network: bool,
        writable: Vec<PathBuf>,
    },
    /// No sandbox at all.
    Unconfined,
}

impl Scope {
    /// "network, write /a, /b" or "no sandbox": what the request and an "always" rule name.
    pub fn describe(&self) -> String {
        match self {
            Scope::Unconfined => "no sandbox".into(),
            Scope::Widen { network, writable } => {
                let mut parts: Vec<String> = Vec::new();
                if *network {
                    parts.push("network".into());
                }
                if !writable.is_empty() {
                    let paths: Vec<String> =
                        writable.iter().map(|p| p.display().to_string()).collect();
                    parts.push(format!("write {}", paths.join(", ")));
                }
                parts.join(", ")
            }
        }
    }
}
