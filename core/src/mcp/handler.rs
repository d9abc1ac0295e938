//! Hearth's side of an MCP connection: who it is, what it does with the server's
//! notifications, and the server's elicitation requests, which go to the session's user as
//! questions (`question::Asker`: a form, or one pick through the permission prompt) and come
//! back accepted, declined or cancelled — a question nobody could be asked is declined, never
//! answered with a default. Sampling and roots keep rmcp's defaults, which decline or answer
//! empty, and Hearth advertises neither. A question that comes while exactly one call of
//! ours runs on the server names that call (`running.rs`).

use std::sync::Arc;

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use serde_json::Value;
use tokio::sync::Notify;

use super::running::Running;
use crate::question::{Asker, Question, Reply, Wait};

/// Where a server's questions go: the user of the session that runs it.
#[derive(Clone)]
pub struct Questions {
    pub session_id: String,
    pub asker: Arc<dyn Asker>,
}

pub struct Handler {
    /// The server's name, for the user reading its questions.
    pub server: String,
    /// Rung on `notifications/tools/list_changed`; the connection task re-lists the tools. A
    /// ring while a listing is under way is kept, so the newest list always wins.
    pub tools_changed: Arc<Notify>,
    /// `None`: the server's questions are declined, and Hearth does not advertise elicitation.
    pub questions: Option<Questions>,
    /// The calls running on the server, which its questions are tied to.
    pub running: Arc<Running>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let (
            Some(questions),
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            },
        ) = (&self.questions, request)
        else {
            // A URL elicitation: Hearth does not advertise that mode.
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let call = self.running.only();
        let question = Question {
            message: format!("The MCP server `{}` asks: {message}", self.server),
            schema: serde_json::to_value(&requested_schema).unwrap_or(Value::Null),
            asked_on: call.as_ref().and_then(|call| call.asks_on.clone()),
            tool_call_id: call.as_ref().map(|call| call.id.clone()),
        };
        // A subagent's call: its state reads `requires_action` until the user answers.
        let _wait = Wait::start(call.and_then(|call| call.waits));
        let reply = questions
            .asker
            .ask(&questions.session_id, &question, &context.ct)
            .await;
        Ok(match reply {
            Reply::Answered(content) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
            }
            Reply::Declined => ElicitResult::new(ElicitationAction::Decline),
            Reply::Cancelled => ElicitResult::new(ElicitationAction::Cancel),
            Reply::CannotAsk(why) => {
                tracing::info!(target: super::LOG_TARGET, server = %self.server, "declined a question nobody could be asked: {why}");
                ElicitResult::new(ElicitationAction::Decline)
            }
        })
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.questions.is_some() {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        }
        // The newest revision that still has `initialize`: rmcp's default (2026-07-28) would
        // move a server that accepts it to per-request metadata, where list-changed
        // notifications only come on a subscription (tests/mcp/NOTES.md).
        ClientConfig::new(
            capabilities,
            Implementation::new("hearth", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}
