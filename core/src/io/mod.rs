//! The workspace port: everything the tools and the permission checks do to the workspace —
//! read, write, remove, stat, walk, canonicalize, run a command — behind one trait, `Io`, with
//! the local backend here. Which backend serves a session is the `Workspaces` port: the
//! protocol edge implements it, since only it knows what its client serves (ACP v1's client
//! backend, `fs/*` and `terminal/*`, is `acp/client_io/`).
//!
//! Every child process the engine starts — local commands here, MCP and language servers for
//! the tools — goes through `process/` (the launcher: explicit environment without the
//! provider credentials, process trees, the confinement hook).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

mod canonical;
mod local;
pub(crate) mod output;
pub(crate) mod process;
#[cfg(test)]
pub(crate) mod testing;
mod walk;

pub use local::LocalIo;
pub(crate) use output::{cut_line, floor_char_boundary};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoError(pub String);

impl std::fmt::Display for IoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for IoError {}

/// A command to run through a shell (`sh -c` locally).
#[derive(Debug, Clone)]
pub struct CommandSpec {
    pub command: String,
    pub cwd: PathBuf,
    pub timeout: Duration,
    /// Bytes of output kept for the model and the log; the rest is dropped with a marker.
    pub output_limit: usize,
    /// The sandbox it runs in; `None`: unconfined.
    pub sandbox: Option<crate::sandbox::Policy>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandResult {
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    /// The kept output (bounded by `output_limit`, with a truncation marker when cut).
    pub output: String,
    pub truncated: bool,
    pub timed_out: bool,
    /// Set when the command ran in a client terminal (to embed it in the tool call).
    pub terminal_id: Option<String>,
    /// The sandbox backend that confined it ("none" where the system has none); `None`
    /// when it ran unconfined by request, or where Hearth cannot confine it (a client's
    /// terminal).
    pub sandbox: Option<String>,
}

pub trait Io: Send + Sync {
    /// The whole text of a file (a client returns its buffer, saved or not).
    fn read_text<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, IoError>>;

    /// The first `max` bytes of a regular file (an image, say). Always local: ACP's `fs/*`
    /// methods carry only text.
    fn read_bytes<'a>(
        &'a self,
        path: &'a Path,
        max: usize,
    ) -> BoxFuture<'a, Result<Vec<u8>, IoError>>;

    /// Replaces (or creates) a file's text, creating missing parent directories locally.
    fn write_text<'a>(
        &'a self,
        path: &'a Path,
        content: &'a str,
    ) -> BoxFuture<'a, Result<(), IoError>>;

    /// Removes a file (undoing one the agent created); a file already gone is not an error.
    fn remove_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<(), IoError>>;

    /// What is at `path`: `None` when nothing is.
    fn stat<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<Option<Meta>, IoError>>;

    /// Where `path` really leads, as the kernel would find it: `..` folded, symlinks followed
    /// (dangling ones too, since writing through one creates its target).
    fn canonicalize(&self, path: &Path) -> PathBuf;

    /// Walks the tree under `spec.root` in a stable order, honouring `.gitignore`, `.ignore`
    /// and git's excludes, and calls `visit` for each entry until it returns false or `cancel`
    /// fires. Blocking: call it off the async workers.
    fn walk(
        &self,
        spec: &WalkSpec,
        cancel: &CancellationToken,
        visit: &mut dyn FnMut(WalkEntry) -> bool,
    ) -> Result<(), IoError>;

    /// Walks as [`Io::walk`] filters, but on several threads and in no order: each thread
    /// calls `visitor` once for the function it then calls for each of its entries, until one
    /// returns false (which ends that thread's part) or `cancel` fires. For the searches that
    /// read every file (`grep`, `glob`), which sort what they keep. Blocking.
    fn walk_parallel<'v>(
        &self,
        spec: &WalkSpec,
        cancel: &CancellationToken,
        visitor: &(dyn Fn() -> Visit<'v> + Sync),
    ) -> Result<(), IoError>;

    /// Runs a command to completion, timeout or `cancel`, streaming output deltas (UTF-8,
    /// lossy) to `output` as they come. On timeout or cancel the whole process tree is
    /// killed before this returns.
    fn run_command<'a>(
        &'a self,
        spec: CommandSpec,
        output: UnboundedSender<String>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<CommandResult, IoError>>;
}

/// What one thread of [`Io::walk_parallel`] calls for each of its entries.
pub type Visit<'a> = Box<dyn FnMut(WalkEntry) -> bool + Send + 'a>;

/// What is at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    pub is_dir: bool,
}

/// A walk: its root, how deep it goes (`Some(1)`: the root's entries only), and an optional
/// ripgrep-style glob filter.
#[derive(Debug, Clone)]
pub struct WalkSpec {
    pub root: PathBuf,
    pub max_depth: Option<usize>,
    pub filter: Option<ignore::overrides::Override>,
}

impl WalkSpec {
    pub fn new(root: &Path) -> Self {
        WalkSpec {
            root: root.to_path_buf(),
            max_depth: None,
            filter: None,
        }
    }
}

/// One entry of a walk. The root itself comes first, at depth 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkEntry {
    pub path: PathBuf,
    pub depth: usize,
    pub is_dir: bool,
    pub is_file: bool,
}

/// Which backend serves a session's workspace: implemented by the protocol edge for its
/// client (local for a client that serves nothing).
pub trait Workspaces: Send + Sync {
    /// The workspace of one session's turn. `turn` is the running turn's token: cancelling
    /// the turn withdraws the client requests still pending.
    fn workspace(&self, session_id: Arc<str>, turn: CancellationToken) -> Arc<dyn Io>;
}
