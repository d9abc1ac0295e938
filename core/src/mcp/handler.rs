//! Hearth's side of an MCP connection: who it is, and what it does with the server's
//! notifications. Everything else (sampling, elicitation, roots) keeps rmcp's defaults, which
//! decline or answer empty, and Hearth advertises none of those capabilities.

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::Notify;

pub struct Handler {
    /// Rung on `notifications/tools/list_changed`; the connection task re-lists the tools. A
    /// ring while a listing is under way is kept, so the newest list always wins.
    pub tools_changed: Arc<Notify>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        // The newest revision that still has `initialize`: rmcp's default (2026-07-28) would
        // move a server that accepts it to per-request metadata, where list-changed
        // notifications only come on a subscription (tests/mcp/NOTES.md).
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("hearth", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}
