//! The I/O backend the tools use: reading and writing files and running commands, either
//! locally or through the ACP client (`fs/*`, `terminal/*`) when the client advertised them —
//! so the agent sees unsaved editor buffers and commands run in the IDE's terminal.
//!
//! Listing and searching directories always happen locally: ACP has no method for them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::rpc::RpcError;

mod client;
mod local;
mod output;
mod process;
mod terminal;
#[cfg(test)]
pub(crate) mod testing;

pub use client::ClientIo;
pub use local::LocalIo;
pub(crate) use output::floor_char_boundary;

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
}

pub trait Io: Send + Sync {
    /// The whole text of a file (a client returns its buffer, saved or not).
    fn read_text<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, IoError>>;

    /// Replaces (or creates) a file's text, creating missing parent directories locally.
    fn write_text<'a>(
        &'a self,
        path: &'a Path,
        content: &'a str,
    ) -> BoxFuture<'a, Result<(), IoError>>;

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

/// Requests to the ACP client on behalf of one session; implemented by the engine.
pub trait ClientRequests: Send + Sync {
    fn session_id(&self) -> &str;
    /// Sends `method` with `params` (the caller adds `sessionId`); `-32800` if `cancel` fires.
    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Value, RpcError>>;
}

/// What the client said it can do (from `initialize`'s `clientCapabilities`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientAbilities {
    pub read_text_file: bool,
    pub write_text_file: bool,
    pub terminal: bool,
}
