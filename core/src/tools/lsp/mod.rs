//! Language servers behind the agent's tools: compiler-grade diagnostics, definitions and
//! references, for the file as the agent sees it.
//!
//! - `spec.rs`: which server serves a file (defaults merged with `lsp.servers`);
//! - `servers.rs`: the engine's servers, one per server and root, shared by sessions;
//! - `server.rs`: one server's life (started on first use, restarted once);
//! - `connection.rs`: one running server — its process, the handshake, the reader task;
//!   `exchange.rs` + `transport.rs`: the JSON-RPC exchange with it; `documents.rs`: the
//!   documents open in it; `pushed.rs`: the diagnostics it pushed; `requests.rs`: the
//!   answers to what it asks;
//! - `session.rs`: a session's hold on its servers, and opening a file with its content;
//! - `diagnostics.rs`, `position.rs`: diagnostics and positions, as a person reads them;
//! - `diagnostics_tool.rs`, `position_tool.rs`: the three tools, and `answers.rs` what they
//!   share; `check.rs`: the diagnostics an edit's result gains.
//!
//! Servers log under [`LOG_TARGET`] (their stderr included); nothing reaches stdout.

use std::path::{Path, PathBuf};
use std::sync::Arc;

mod answers;
mod check;
mod connection;
mod diagnostics;
mod diagnostics_tool;
mod documents;
mod exchange;
mod position;
mod position_tool;
mod pushed;
mod requests;
mod server;
mod servers;
mod session;
mod spec;
mod transport;

pub use check::report as change_report;
pub use servers::Servers;
pub use session::Lsp;

use super::{AnyTool, erase};
use diagnostics_tool::Diagnostics;
use position_tool::{AtPosition, Question};

/// The `tracing` target of everything the language servers do.
pub const LOG_TARGET: &str = "hearth::lsp";

/// The three LSP tools, offered to every session whether or not a server is installed, so the
/// model learns what exists (a call then says what is missing).
pub fn tools() -> Vec<Arc<dyn AnyTool>> {
    vec![
        erase(Diagnostics),
        erase(AtPosition(Question::Definition)),
        erase(AtPosition(Question::References)),
    ]
}

/// The `file:` URI of an absolute path.
fn uri(path: &Path) -> String {
    url::Url::from_file_path(path)
        .map(String::from)
        .unwrap_or_else(|()| format!("file://{}", path.display()))
}

/// The path of a `file:` URI.
fn path_of(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok()?.to_file_path().ok()
}

#[cfg(test)]
mod tests;
