//! Following the session's MCP servers: each server that fails — at startup, later, or after a
//! reconnect — is reported once per failure (a `ServiceFailed` event: a notice where the
//! client shows notices, a failed tool call named after the server elsewhere); and the command list is announced
//! again when the servers' prompts change it. Never before the response that opened the
//! session: the protocol edge starts the watch once it has answered.

use std::collections::HashSet;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::Session;
use super::events::{EventSink, SessionEvent, Visibility};
use crate::agent::commands;
use crate::ids::new_id;
use crate::mcp::{McpServers, ServerState};

/// Watches `servers` until `released` fires (they were replaced, or the session ended).
pub fn watch(session: Arc<Session>, servers: &McpServers, released: CancellationToken) {
    let mut status = servers.subscribe();
    let runtime = session.ctx().runtime().clone();
    runtime.spawn(async move {
        // The servers whose current failure was told (a reconnect makes one untold again).
        let mut reported = HashSet::new();
        loop {
            let failed: Vec<(String, String)> = {
                let servers = status.borrow_and_update();
                reported.retain(|name| {
                    servers
                        .iter()
                        .any(|s| s.name == *name && matches!(s.state, ServerState::Failed { .. }))
                });
                servers
                    .iter()
                    .filter_map(|server| match &server.state {
                        ServerState::Failed { reason } => {
                            Some((server.name.clone(), reason.clone()))
                        }
                        _ => None,
                    })
                    .collect()
            };
            for (name, reason) in failed {
                if reported.insert(name.clone()) {
                    report(&session, &name, reason);
                }
            }
            commands::refresh(&session, &*session);
            tokio::select! {
                () = released.cancelled() => return,
                changed = status.changed() => if changed.is_err() { return },
            }
        }
    });
}

/// Live only: a failure describes this connection, not the session's history.
fn report(session: &Session, server: &str, reason: String) {
    let title = format!("MCP server `{server}` is unavailable");
    tracing::warn!(session = %session.id, server, "MCP server unavailable");
    let event = SessionEvent::ServiceFailed {
        id: new_id("mcp"),
        title,
        message: reason,
    };
    session.emit(event, Visibility::Transient);
}
