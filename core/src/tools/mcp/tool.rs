//! One tool of an MCP server, as a Hearth tool: its spec from the server's listing, its kind
//! from its annotations, and a call that the turn's cancel token stops at once, telling the
//! server.

use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, JsonObject, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde_json::Value;

use super::content::output;
use crate::mcp::{RunningCall, ServerRef, lost, service_error, unavailable};
use crate::tools::{About, Access, CallReport, Context, Kind, Output, Planned, Tool, ToolError};

type McpToolInfo = rmcp::model::Tool;

/// How long a cancelled call waits for its `notifications/cancelled` to be sent.
const CANCEL_SEND: Duration = Duration::from_secs(1);

pub struct McpTool {
    /// The name the model calls it by (`names::tool_names`).
    name: String,
    server: ServerRef,
    peer: Peer<RoleClient>,
    info: McpToolInfo,
}

impl McpTool {
    pub(super) fn new(
        name: String,
        server: ServerRef,
        peer: Peer<RoleClient>,
        info: McpToolInfo,
    ) -> Self {
        McpTool {
            name,
            server,
            peer,
            info,
        }
    }

    /// What the server says about whether the tool changes anything. Only a hint, but the one
    /// MCP has, and the user chose to connect this server.
    fn read_only(&self) -> bool {
        self.info
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false)
    }

    /// Sends the call and waits for its answer, or for the turn's cancel.
    async fn call(
        &self,
        arguments: JsonObject,
        ctx: &Context,
    ) -> Result<CallToolResult, ToolError> {
        let params = CallToolRequestParams::new(self.info.name.clone()).with_arguments(arguments);
        // While it runs, a question of the server's may name it (`mcp/running.rs`).
        let running = self.server.running();
        let _running = ctx.user.as_ref().map(|user| {
            running.enter(RunningCall {
                id: user.call_id().to_string(),
                asks_on: user.asks_on().map(str::to_string),
                waits: user.waits(),
            })
        });
        let handle = self
            .peer
            .send_cancellable_request(
                ClientRequest::CallToolRequest(CallToolRequest::new(params)),
                PeerRequestOptions::no_options(),
            )
            .await;
        let mut handle = match handle {
            Ok(handle) => handle,
            Err(e) => return Err(self.failed(&e).await),
        };
        let answer = tokio::select! {
            () = ctx.cancel.cancelled() => None,
            answer = &mut handle.rx => Some(answer),
        };
        let Some(answer) = answer else {
            // Explicitly: dropping the request would send nothing, and rmcp's drop guards only
            // try (tests/mcp/NOTES.md). Bounded, so a stuck server cannot hold the turn.
            let reason = Some("cancelled by the user".to_owned());
            let _ = tokio::time::timeout(CANCEL_SEND, handle.cancel(reason)).await;
            return Err(ToolError("cancelled".into()));
        };
        match answer.unwrap_or(Err(ServiceError::TransportClosed)) {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            // A result with no members at all parses as the empty result.
            Ok(ServerResult::EmptyResult(_)) => Ok(CallToolResult::default()),
            Ok(_) => Err(ToolError(format!(
                "the MCP server `{}` answered the call with something other than a tool result",
                self.server.name()
            ))),
            Err(e) => Err(self.failed(&e).await),
        }
    }

    /// The error the model sees; a lost connection also marks the server failed, so the user
    /// hears of it and the next turn no longer offers its tools.
    async fn failed(&self, error: &ServiceError) -> ToolError {
        if lost(error) {
            self.server.lost(unavailable(error)).await;
            return self.unavailable_error();
        }
        ToolError(format!(
            "the MCP server `{}` failed the call: {}",
            self.server.name(),
            service_error(error)
        ))
    }

    fn unavailable_error(&self) -> ToolError {
        let reason = self.server.failure().unwrap_or_default();
        ToolError(format!(
            "the MCP server `{}` is not available: {reason}",
            self.server.name()
        ))
    }
}

impl Tool for McpTool {
    /// Whatever the server's schema says; the server checks it.
    type Input = Value;
    type Plan = JsonObject;

    /// The server's description, or which tool of which server; read-only by the server's
    /// word, or possibly anything.
    fn about(&self) -> About {
        let description = self
            .info
            .description
            .as_deref()
            .filter(|d| !d.trim().is_empty())
            .map(str::to_owned)
            .unwrap_or_else(|| {
                format!(
                    "`{}` of the MCP server `{}`",
                    self.info.name,
                    self.server.name()
                )
            });
        let kind = if self.read_only() {
            Kind::Read
        } else {
            Kind::Other
        };
        About::new(self.name.clone(), kind, description)
    }

    /// The server's own schema, as it listed it.
    fn parameters(&self) -> Value {
        Value::Object((*self.info.input_schema).clone())
    }

    async fn prepare(
        &self,
        input: Value,
        _ctx: &Context,
    ) -> Result<Planned<JsonObject>, ToolError> {
        let arguments = match input {
            Value::Object(arguments) => arguments,
            Value::Null => JsonObject::new(),
            _ => {
                return Err(ToolError(
                    "invalid arguments: expected a JSON object of the tool's parameters".into(),
                ));
            }
        };
        Ok(Planned::new(
            format!("{}: {}", self.server.name(), self.info.name),
            Vec::new(),
            Access::External {
                server: self.server.name().to_owned(),
                tool: self.info.name.to_string(),
                read_only: self.read_only(),
            },
            arguments,
        ))
    }

    async fn run(
        &self,
        arguments: JsonObject,
        ctx: &Context,
        _report: &dyn CallReport,
    ) -> Result<Output, ToolError> {
        if self.server.failure().is_some() {
            return Err(self.unavailable_error());
        }
        let result = self.call(arguments, ctx).await?;
        output(result, ctx.limits.output_limit)
    }
}
