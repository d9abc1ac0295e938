//! The language-server client stack: what a compiler knows, for the file as the agent sees
//! it. It serves the LSP tools (`tools/lsp/`: `lsp_diagnostics`, `lsp_definition`,
//! `lsp_references`, and the diagnostics of an edit's result) and knows none of them: a call
//! opens a file as a [`Caller`] (its workspace port, roots, working directory and token) and
//! gets an [`Opened`] file or an [`OpenError`] in the model's words.
//!
//! - `spec.rs`: which server serves a file (defaults merged with `lsp.servers`);
//! - `servers.rs`: the engine's servers, one per server and root, shared by sessions;
//! - `server.rs`: one server's life (started on first use, restarted once);
//! - `connection.rs`: one running server — its process, the handshake, the reader task;
//!   `exchange.rs` + `transport.rs`: the JSON-RPC exchange with it; `documents.rs`: the
//!   documents open in it; `pushed.rs`: the diagnostics it pushed; `readiness.rs`: whether
//!   it says it has loaded its project; `requests.rs`: the answers to what it asks;
//! - `session.rs`: a session's hold on its servers ([`Lsp`]), and opening a file with its
//!   content;
//! - `diagnostics.rs`, `position.rs`: diagnostics and positions, as a person reads them.
//!
//! **Who owns a server.** `ToolDeps.lsp` is the engine's [`Servers`]: one server per (config
//! name, workspace root) — the innermost session root holding the file, else the cwd —
//! counted by the sessions holding it. A session holds servers through its [`Lsp`] (owned by
//! `SessionServices` and handed to every tool call as `tools::Context::lsp`);
//! `SessionServices::shutdown` releases them, the last holder stops the server, and
//! `Engine::close` stops what is left and waits for every process group (the sessions', those
//! let go, and one still in its handshake: a server's connection is published as soon as its
//! process is spawned), so none outlives the engine.
//!
//! **The exchange.** `Content-Length` framing (`transport.rs`); a reader task resolves
//! answers (`exchange.rs`), records pushed `publishDiagnostics` (`pushed.rs`), and answers
//! the server's own requests (`requests.rs`). Every request is bounded by `lsp.timeoutSecs`
//! and the turn's token; a timed-out one is cancelled with the server (`$/cancelRequest`).
//! Positions are UTF-16 (the one encoding every server offers); `position.rs` converts to and
//! from the 1-based lines and character columns the tools speak.
//!
//! **Content.** Before asking, [`Lsp::open`] reads the file through the workspace port (the
//! editor's unsaved buffer when the client serves `fs/read_text_file`) and makes the server's
//! copy match (`documents.rs`), holding the connection's turn until the answer is in (another
//! session syncing other content for the same file in between would make the answer describe
//! that content). Diagnostics are pulled (`textDocument/diagnostic`); a server without it
//! (`-32601`) is waited for as it pushes diagnostics for that version (`diagnostics.rs`). A
//! server that says it is still loading its project (rust-analyzer's
//! `experimental/serverStatus`) is waited for first, within `lsp.startupTimeoutSecs`, and an
//! answer it gave while loading is asked again (`readiness.rs`).
//!
//! What the tools make of the answers (which places are shown with their lines, the errors an
//! edit introduced) is specified with them, in `tools/lsp/` (`mod.rs`, `check.rs`).
//!
//! Servers log under [`LOG_TARGET`] (their stderr included); nothing reaches stdout. Processes
//! are started through the launcher (`io/process/`), as every child Hearth starts.
//!
//! Tests: `tools/lsp/tests.rs` (sharing, failures and life against a fake server, through the
//! tools), `core/tests/lsp.rs` (the real servers, through the whole engine),
//! `core/tests/lsp_processes.rs`; pure parts test themselves inline.

use std::path::{Path, PathBuf};

mod connection;
pub mod diagnostics;
mod documents;
mod exchange;
pub mod position;
mod pushed;
mod readiness;
mod requests;
mod server;
mod servers;
mod session;
mod spec;
mod transport;

pub use exchange::CallError;
pub use servers::Servers;
pub use session::{Caller, Lsp, OpenError, Opened};

/// The `tracing` target of everything the language servers do.
pub const LOG_TARGET: &str = "hearth::lsp";

/// The `file:` URI of an absolute path.
fn uri(path: &Path) -> String {
    url::Url::from_file_path(path)
        .map(String::from)
        .unwrap_or_else(|()| format!("file://{}", path.display()))
}

/// The path of a `file:` URI.
pub fn path_of(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok()?.to_file_path().ok()
}
