//! MCP servers' tools: a session connects the servers it was given (stdio processes and
//! streamable-HTTP endpoints) in parallel, offers their tools to the model as
//! `mcp__<server>__<tool>`, and lets them go when it ends.
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

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::{Instant, timeout_at};

use crate::net::LazyClient;
use crate::tools::Tool;

mod board;
mod connect;
mod content;
mod handler;
mod names;
mod process;
mod spec;
#[cfg(test)]
mod tests;
mod tool;

use board::{Board, Live, ServerRef};
pub use board::{ServerState, ServerStatus};
pub use connect::http_client;
use process::Group;
pub use spec::{McpServerSpec, Transport};
pub use tool::McpTool;

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
}

/// How long after the startup deadline `ready` waits for the last reports (a server that
/// timed out is killed and marked failed right at the deadline).
const READY_MARGIN: Duration = Duration::from_millis(200);

/// The MCP servers of one session. Dropping it shuts them down.
pub struct McpServers {
    board: Arc<Board>,
    /// When every server has had its startup timeout, whatever happened to its task.
    started_by: Instant,
}

impl McpServers {
    /// Starts connecting every server, in parallel, on `runtime`, and returns at once: each
    /// one is `Connecting` until it is connected or failed, within `startup_timeout`.
    pub fn connect(
        specs: Vec<McpServerSpec>,
        options: Options,
        runtime: &tokio::runtime::Handle,
    ) -> McpServers {
        let board = Arc::new(Board::new(
            specs.iter().map(|spec| spec.name.clone()).collect(),
        ));
        let deadline = Instant::now() + options.startup_timeout;
        let options = Arc::new(options);
        for (index, spec) in specs.into_iter().enumerate() {
            let server = ServerRef::new(board.clone(), index);
            runtime.spawn(connect::run(
                server,
                spec.transport,
                options.clone(),
                deadline,
            ));
        }
        McpServers {
            board,
            started_by: deadline + READY_MARGIN,
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
        let _ = timeout_at(self.started_by, started).await;
    }

    /// The tools of every connected server, now, named for the model (`mcp__<server>__<tool>`,
    /// unique across the servers).
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let mut found = Vec::new();
        for (index, live) in self.board.lives().iter().enumerate() {
            if let Live::Connected { peer, tools } = live {
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
            .map(|((index, peer, tool), name)| {
                let server = ServerRef::new(self.board.clone(), index);
                Arc::new(McpTool::new(name, server, peer, tool)) as Arc<dyn Tool>
            })
            .collect()
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
