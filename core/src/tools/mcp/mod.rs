//! MCP servers' tools as Hearth tools: `tool.rs` (`McpTool`, one listed tool and its call)
//! and `content.rs` (a call's result as a tool `Output`). The servers themselves — starting,
//! connecting, statuses, prompts — are the client stack of `crate::mcp`.
//!
//! Tests: `tests.rs` (real stdio and HTTP servers, through their tools), `core/tests/mcp.rs`.

use std::sync::Arc;

mod content;
#[cfg(test)]
mod tests;
mod tool;

pub use tool::McpTool;

use super::{AnyTool, erase};
use crate::mcp::{McpServers, ServerTool};

/// The tools of every connected server of `servers`, now, as the model is offered them.
pub fn tools(servers: &McpServers) -> Vec<Arc<dyn AnyTool>> {
    servers
        .tools()
        .into_iter()
        .map(
            |ServerTool {
                 name,
                 server,
                 peer,
                 info,
             }| { erase(McpTool::new(name, server, peer, info)) },
        )
        .collect()
}
