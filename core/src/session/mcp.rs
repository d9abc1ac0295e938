//! Telling the user about the session's MCP servers: each server that fails — at startup or
//! later — is reported once, as a warning notice where the client shows notices and as a
//! failed tool call named after the server elsewhere. Never before the response that opened
//! the session: the protocol edge starts the watch once it has answered.

use std::collections::HashSet;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::Session;
use super::events::{EventSink, SessionEvent, Visibility};
use crate::agent::new_id;
use crate::tools::mcp::{McpServers, ServerState};

/// Watches `servers` until `released` fires (they were replaced, or the session ended).
pub fn report_failures(session: Arc<Session>, servers: &McpServers, released: CancellationToken) {
    let mut status = servers.subscribe();
    let runtime = session.ctx().runtime().clone();
    runtime.spawn(async move {
        let mut reported = HashSet::new();
        loop {
            let failed: Vec<(String, String)> = status
                .borrow_and_update()
                .iter()
                .filter_map(|server| match &server.state {
                    ServerState::Failed { reason } => Some((server.name.clone(), reason.clone())),
                    _ => None,
                })
                .collect();
            for (name, reason) in failed {
                if reported.insert(name.clone()) {
                    report(&session, &name, reason);
                }
            }
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
    let event = if session.ctx().abilities().notices {
        SessionEvent::Notice {
            title,
            description: reason,
        }
    } else {
        SessionEvent::ServiceFailed {
            id: new_id("mcp"),
            title,
            message: reason,
        }
    };
    tracing::warn!(session = %session.id, server, "MCP server unavailable");
    session.emit(event, Visibility::Transient);
}
