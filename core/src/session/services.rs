//! What one live session owns beyond its state: its tool registry (the built-in tools, the
//! `lsp_*` ones among them), its MCP servers (whose tools are looked up beside the registry:
//! [`SessionServices::tool`]), its hold on the language servers, and the way to its workspace
//! (made per turn, since a new `initialize` may change what the client serves and the turn's
//! token withdraws its requests). `shutdown`
//! releases what the tools started, once: when the session is closed or deleted, when its
//! actor is replaced after a crash, and when the engine closes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::chat::ToolSpec;
use crate::io::{Io, Workspaces};
use crate::lsp::Lsp;
use crate::mcp::{McpServers, ServerState, Stopping};
use crate::tools::{AnyTool, Registry};

/// Which tools, by name, a subagent's services offer.
pub type ToolFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;

pub struct SessionServices {
    session_id: Arc<str>,
    tools: Registry,
    /// A subagent's narrowing of its parent's tools (`None`: all of them).
    allowed: Option<ToolFilter>,
    /// The MCP servers of the request that opened (or last reopened) the session, and the
    /// token fired when they are let go.
    mcp: Mutex<Option<(Arc<McpServers>, CancellationToken)>>,
    /// The language servers it holds (shared with the other sessions on the same roots).
    lsp: Arc<Lsp>,
    shut_down: AtomicBool,
}

impl SessionServices {
    pub fn new(session_id: Arc<str>, tools: Registry, lsp: Arc<Lsp>) -> Self {
        SessionServices {
            session_id,
            tools,
            allowed: None,
            mcp: Mutex::new(None),
            lsp,
            shut_down: AtomicBool::new(false),
        }
    }

    /// A subagent's services: these very MCP and language servers, not restarted, and the
    /// tools `allowed` keeps. They are never shut down: the servers stay the parent's.
    pub fn for_child(&self, allowed: ToolFilter) -> SessionServices {
        let mcp = self.mcp.lock().unwrap_or_else(|p| p.into_inner()).clone();
        SessionServices {
            session_id: self.session_id.clone(),
            tools: self.tools.clone(),
            allowed: Some(allowed),
            mcp: Mutex::new(mcp),
            lsp: self.lsp.clone(),
            shut_down: AtomicBool::new(false),
        }
    }

    /// Whether the session may use the tool `name` (a subagent's type narrows its tools).
    pub fn allows(&self, name: &str) -> bool {
        self.allowed.as_ref().is_none_or(|allowed| allowed(name))
    }

    /// The tool the model calls `name`: a built-in one, or a connected MCP server's.
    pub fn tool(&self, name: &str) -> Option<Arc<dyn AnyTool>> {
        if !self.allows(name) {
            return None;
        }
        self.tools.get(name).or_else(|| {
            self.mcp_tools()
                .into_iter()
                .find(|tool| tool.spec().name == name)
        })
    }

    /// What the model is told about every tool, built-in ones first.
    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        let mut specs = self.tools.specs();
        specs.extend(self.mcp_tools().iter().map(|tool| tool.spec().clone()));
        specs.retain(|spec| self.allows(&spec.name));
        specs
    }

    fn mcp_tools(&self) -> Vec<Arc<dyn AnyTool>> {
        self.mcp()
            .map(|servers| crate::tools::mcp::tools(&servers))
            .unwrap_or_default()
    }

    /// The session's hold on the language servers.
    pub fn lsp(&self) -> Arc<Lsp> {
        self.lsp.clone()
    }

    /// The session's MCP servers, if it was given any.
    pub fn mcp(&self) -> Option<Arc<McpServers>> {
        let mcp = self.mcp.lock().unwrap_or_else(|p| p.into_inner());
        mcp.as_ref().map(|(servers, _)| servers.clone())
    }

    /// Makes `servers` the session's, letting the previous ones go (a `load` or `resume`
    /// brings the servers of its own request; `None` when it brings none). The token fires
    /// when these servers are let go in turn. After shutdown they are let go at once.
    pub fn set_mcp(&self, servers: Option<Arc<McpServers>>) -> CancellationToken {
        let released = CancellationToken::new();
        let mut mcp = self.mcp.lock().unwrap_or_else(|p| p.into_inner());
        let previous = if self.shut_down.load(Ordering::Acquire) {
            released.cancel();
            servers.map(|servers| (servers, released.clone()))
        } else {
            std::mem::replace(&mut *mcp, servers.map(|s| (s, released.clone())))
        };
        drop(mcp);
        if let Some((servers, token)) = previous {
            token.cancel();
            drop(servers.shutdown());
        }
        released
    }

    /// Waits until the MCP servers have connected or failed (bounded by their startup
    /// timeout), so that a turn sees every tool that will come.
    pub async fn mcp_ready(&self) {
        if let Some(servers) = self.mcp() {
            servers.ready().await;
        }
    }

    /// The MCP servers that failed, with why: the model is told, so it does not invent their
    /// tools.
    pub fn unavailable(&self) -> Vec<(String, String)> {
        let Some(servers) = self.mcp() else {
            return Vec::new();
        };
        servers
            .status()
            .into_iter()
            .filter_map(|server| match server.state {
                ServerState::Failed { reason } => Some((server.name, reason)),
                _ => None,
            })
            .collect()
    }

    /// The workspace of a turn, from the connection's `workspaces`: through the client for
    /// what it serves, else local. The turn's token withdraws the client requests still
    /// pending when it is cancelled.
    pub fn workspace(&self, workspaces: &dyn Workspaces, turn: &CancellationToken) -> Arc<dyn Io> {
        workspaces.workspace(self.session_id.clone(), turn.clone())
    }

    /// Releases what the session's services started, without waiting for it to be gone;
    /// later calls do nothing.
    pub fn shutdown(&self) {
        drop(self.stop());
    }

    /// `shutdown`, then waits (about a second at most) until the MCP servers' processes are
    /// gone: for a process about to exit, whose threads die with it.
    pub fn shutdown_and_wait(&self) {
        if let Some(stopping) = self.stop() {
            stopping.wait();
        }
    }

    fn stop(&self) -> Option<Stopping> {
        if self.shut_down.swap(true, Ordering::AcqRel) {
            return None;
        }
        self.tools.shutdown();
        self.lsp.release();
        let servers = self.mcp.lock().unwrap_or_else(|p| p.into_inner()).take();
        servers.map(|(servers, released)| {
            released.cancel();
            servers.shutdown()
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use serde_json::Value;

    use super::*;
    use crate::tools::{About, CallReport, Context, Kind, Output, Planned, Tool, ToolError, erase};

    /// A tool that only counts its shutdowns.
    #[derive(Default)]
    struct Counted(AtomicUsize);

    impl Tool for Arc<Counted> {
        type Input = Value;
        type Plan = ();

        fn about(&self) -> About {
            About::new("counted", Kind::Think, "")
        }
        async fn prepare(&self, _: Value, _: &Context) -> Result<Planned<()>, ToolError> {
            unreachable!()
        }
        async fn run(&self, _: (), _: &Context, _: &dyn CallReport) -> Result<Output, ToolError> {
            unreachable!()
        }
        fn shutdown(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn shutdown_reaches_every_tool_once() {
        let counted = Arc::new(Counted::default());
        let tools = Registry::new(vec![erase(counted.clone())]);
        let services = SessionServices::new(Arc::from("sess_1"), tools, Lsp::none());
        services.shutdown();
        services.shutdown();
        assert_eq!(counted.0.load(Ordering::SeqCst), 1);
    }
}
