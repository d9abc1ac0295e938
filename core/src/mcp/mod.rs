//! MCP servers' tools and prompts: a session connects the servers it was given (stdio
//! processes and streamable-HTTP endpoints) in parallel, offers their tools to the model as
//! `mcp__<server>__<tool>` and their prompts to the user as commands, reconnects them when
//! asked (`/mcp reconnect`), and lets them go when it ends.
//!
//! A server never fails the session and is never dropped silently: each one has a status
//! (`McpServers::status`, and `subscribe` for changes) that says why it is unavailable —
//! it could not start, timed out, failed its handshake, died later, or uses a transport
//! Hearth does not speak.
//!
//! Logging: everything of this module, including each stdio server's stderr (one event a
//! line, with the server's name in the `server` field), goes to the target `hearth::mcp`
//! ([`LOG_TARGET`]). rmcp itself logs every notification it receives at INFO under the target
//! `rmcp`; hosts should filter it with `rmcp=warn`.
//!
//! This is the MCP client stack; it serves the tools and knows none of them: `tools()` lists
//! each connected server's tools as [`ServerTool`]s, and `tools/mcp/` makes each one a Hearth
//! tool (`McpTool`, and the mapping of its results). The files:
//!
//! - `spec.rs`: what a session is asked to connect (ACP's `McpServer` entries, turned into
//!   these by `acp/mcp.rs`);
//! - `connect.rs`: one server's connection from start to end (a stdio process group started
//!   through the launcher, or a streamable-HTTP client), and every way it can end as a reason;
//! - `board.rs`: every server's state behind one lock, restarts included; `handler.rs`:
//!   Hearth's side of the connection;
//! - `names.rs`: the names the model calls the tools by; `prompts.rs`: the servers' prompts;
//!   `blocks.rs`: a content block as text.
//!
//! Tests: `tools/mcp/tests.rs` (real stdio and HTTP servers, through their tools),
//! `core/tests/mcp.rs` (through the whole engine); pure parts test themselves inline.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::{Instant, timeout_at};

use rmcp::service::{Peer, RoleClient};

use crate::io::process::{Group, Launcher};
use crate::net::LazyClient;

mod blocks;
mod board;
mod connect;
mod handler;
mod names;
mod prompts;
mod running;
mod spec;

pub use blocks::block_text;
use board::{Board, Link};
pub use board::{ServerRef, ServerState, ServerStatus};
pub use connect::{http_client, lost, service_error, unavailable};
pub use handler::Questions;
pub use prompts::McpPrompt;
pub use running::RunningCall;
pub use spec::{McpServerSpec, Transport};

/// The `tracing` target of MCP events and of stdio servers' stderr.
pub const LOG_TARGET: &str = "hearth::mcp";

/// How a session's servers are connected.
pub struct Options {
    /// How long a server has to start, answer the handshake and list its tools.
    pub startup_timeout: Duration,
    /// The client of HTTP servers (`http_client`), shared by the engine's sessions.
    pub http: Arc<LazyClient>,
    /// Where stdio servers run: the session's working directory.
    pub cwd: PathBuf,
    /// The session's roots (its cwd, then its additional directories): what a confined stdio
    /// server may write, as its commands may.
    pub roots: Vec<PathBuf>,
    /// How stdio servers are started.
    pub launcher: Arc<Launcher>,
    /// The sandbox of the stdio servers that opt in (or of all, with
    /// `sandbox.mcpServers`): `roots` writable as its mode says.
    pub sandbox: Arc<crate::sandbox::Setup>,
    /// Where the servers' elicitation requests go (the session's user).
    pub questions: Option<Questions>,
}

/// How long after the startup deadline `ready` waits for the last reports (a server that
/// timed out is killed and marked failed right at the deadline).
const READY_MARGIN: Duration = Duration::from_millis(200);

/// The MCP servers of one session. Dropping it shuts them down.
pub struct McpServers {
    board: Arc<Board>,
    /// How each server is reached, kept for a reconnect.
    transports: Vec<Transport>,
    options: Arc<Options>,
    runtime: tokio::runtime::Handle,
    /// When every server has had its startup timeout, whatever happened to its task (moved
    /// on by a reconnect).
    started_by: Mutex<Instant>,
}

impl McpServers {
    /// Starts connecting every server, in parallel, on `runtime`, and returns at once: each
    /// one is `Connecting` until it is connected or failed, within `startup_timeout`.
    pub fn connect(
        specs: Vec<McpServerSpec>,
        options: Options,
        runtime: &tokio::runtime::Handle,
    ) -> McpServers {
        let (names, transports) = specs
            .into_iter()
            .map(|spec| (spec.name, spec.transport))
            .unzip();
        let servers = McpServers {
            board: Arc::new(Board::new(names)),
            transports,
            options: Arc::new(options),
            runtime: runtime.clone(),
            started_by: Mutex::new(Instant::now()),
        };
        let all: Vec<usize> = (0..servers.transports.len()).collect();
        servers.start(&all, |index| Some(servers.board.server(index)));
        servers
    }

    /// Connects server `name` again, or every server when `name` is `None`, dropping their
    /// current connections; each is `Connecting` until it is connected or failed anew. The
    /// names reconnected, or why none was.
    pub fn reconnect(&self, name: Option<&str>) -> Result<Vec<String>, String> {
        let names = self.board.names();
        let chosen: Vec<usize> = match name {
            None => (0..names.len()).collect(),
            Some(name) => match names.iter().position(|n| n == name) {
                Some(index) => vec![index],
                None => {
                    let known: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                    return Err(format!(
                        "there is no MCP server `{name}` in this session (servers: {})",
                        known.join(", ")
                    ));
                }
            },
        };
        self.start(&chosen, |index| self.board.restart(index));
        Ok(chosen.iter().map(|&index| names[index].clone()).collect())
    }

    /// Starts the connection task of each server in `indices`, through the ref `server`
    /// gives it (none once the session is closing), with a startup deadline from now.
    fn start(&self, indices: &[usize], server: impl Fn(usize) -> Option<board::ServerRef>) {
        let deadline = Instant::now() + self.options.startup_timeout;
        *self.started_by.lock().unwrap_or_else(|e| e.into_inner()) = deadline + READY_MARGIN;
        for &index in indices {
            if let Some(server) = server(index) {
                let transport = self.transports[index].clone();
                let task = connect::run(server, transport, self.options.clone(), deadline);
                self.runtime.spawn(task);
            }
        }
    }

    /// Each server's state, in the order they were given.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.board.status()
    }

    /// Every change of `status`: a server connected, changed its tools, or failed (at startup
    /// or later, when its process exits or its connection is lost).
    pub fn subscribe(&self) -> watch::Receiver<Vec<ServerStatus>> {
        self.board.subscribe()
    }

    /// Resolves when no server is `Connecting` any more (at most the startup timeout), so
    /// that a first prompt sees every tool that will come.
    pub async fn ready(&self) {
        let mut status = self.subscribe();
        let started = status.wait_for(|servers| {
            servers
                .iter()
                .all(|server| server.state != ServerState::Connecting)
        });
        let started_by = *self.started_by.lock().unwrap_or_else(|e| e.into_inner());
        let _ = timeout_at(started_by, started).await;
    }

    /// The tools of every connected server, now, named for the model (`mcp__<server>__<tool>`,
    /// unique across the servers); `tools/mcp/` makes each one a Hearth tool.
    pub fn tools(&self) -> Vec<ServerTool> {
        let mut found = Vec::new();
        for (index, link) in self.board.links().iter().enumerate() {
            if let Link::Connected { peer, tools, .. } = link {
                found.extend(tools.iter().map(|tool| (index, peer.clone(), tool.clone())));
            }
        }
        let servers = self.board.names();
        let pairs: Vec<(&str, &str)> = found
            .iter()
            .map(|(index, _, tool)| (servers[*index].as_str(), tool.name.as_ref()))
            .collect();
        let names = names::tool_names(&pairs);
        found
            .into_iter()
            .zip(names)
            .map(|((index, peer, info), name)| ServerTool {
                name,
                server: self.board.server(index),
                peer,
                info,
            })
            .collect()
    }

    /// The prompts of every connected server, now, in the servers' order.
    pub fn prompts(&self) -> Vec<McpPrompt> {
        let names = self.board.names();
        let mut found = Vec::new();
        for (index, link) in self.board.links().iter().enumerate() {
            if let Link::Connected { prompts, .. } = link {
                found.extend(prompts.iter().map(|p| McpPrompt::new(&names[index], p)));
            }
        }
        found
    }

    /// Gets prompt `prompt` of server `server` with `arguments`: the text of its messages.
    pub async fn get_prompt(
        &self,
        server: &str,
        prompt: &str,
        arguments: Vec<(String, String)>,
    ) -> Result<String, String> {
        let index = self.board.names().iter().position(|n| n == server);
        let peer = index.and_then(|index| match &self.board.links()[index] {
            Link::Connected { peer, .. } => Some(peer.clone()),
            _ => None,
        });
        let Some(peer) = peer else {
            return Err(format!("the MCP server `{server}` is not connected"));
        };
        prompts::get(&peer, prompt, arguments).await
    }

    /// Lets every server go, without blocking: connections end, each stdio server's whole
    /// process group gets SIGTERM now and SIGKILL after a grace period (on threads of their
    /// own), and no state change is reported after this. Later calls do nothing more.
    pub fn shutdown(&self) -> Stopping {
        Stopping(self.board.shutdown())
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        // The groups finish stopping on their own threads.
        drop(self.shutdown());
    }
}

/// One tool a connected server listed, with what calling it takes.
pub struct ServerTool {
    /// The name the model calls it by (`names::tool_names`).
    pub name: String,
    /// Its server, to report a connection lost during a call.
    pub server: ServerRef,
    /// The connection a call is sent on.
    pub peer: Peer<RoleClient>,
    /// What the server listed: its name, description, schema and annotations.
    pub info: rmcp::model::Tool,
}

/// The process groups `shutdown` is stopping. Dropping it lets them finish in the background;
/// a process about to exit calls `wait`, since its threads die with it.
#[must_use = "drop it to let the servers stop in the background, or wait for them"]
pub struct Stopping(Vec<Arc<Group>>);

impl Stopping {
    /// Blocks until every group is gone or killed: about a second at most.
    pub fn wait(self) {
        for group in self.0 {
            group.wait();
        }
    }
}
