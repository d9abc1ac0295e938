//! The domain's requests to the ACP client, on the wire: `fs/*` and `terminal/*` for the
//! client-served workspace (`client_io::ClientPort`), `session/request_permission` for the
//! permission prompt (`permissions::prompt::Approver`), and questions (`question::Asker`):
//! `elicitation/create` forms for a client that advertised `elicitation.form`, else a
//! permission request whose options are the form's choices, when one pick answers it.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::client_io::{ClientError, ClientPort};
use super::updates::{attributed, diff_content, text_content};
use crate::ids::new_id;
use crate::outbox::Outbox;
use crate::permissions::prompt::{Approver, OptionKind, PermissionAsk};
use crate::question::{Asker, Question, Reply, one_pick};
use crate::rpc::error::REQUEST_CANCELLED;
use crate::rpc::outgoing::Outgoing;

pub struct AcpClient {
    outgoing: Arc<Outgoing>,
    outbox: Outbox,
}

impl AcpClient {
    pub fn new(outgoing: Arc<Outgoing>, outbox: Outbox) -> Self {
        AcpClient { outgoing, outbox }
    }
}

impl ClientPort for AcpClient {
    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Value, ClientError>> {
        Box::pin(async move {
            self.outgoing
                .request(&self.outbox, method, params, cancel)
                .await
                .map_err(|e| ClientError { message: e.message })
        })
    }
}

impl AcpClient {
    /// Sends a `session/request_permission` and returns the chosen option's id; `Ok(None)`
    /// when it was cancelled (by `cancel`, or by the client).
    async fn choose(
        &self,
        params: Value,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, String> {
        let answer = self
            .outgoing
            .request(&self.outbox, "session/request_permission", params, cancel)
            .await;
        match answer {
            Ok(result) if result.pointer("/outcome/outcome") == Some(&json!("selected")) => {
                Ok(result
                    .pointer("/outcome/optionId")
                    .and_then(Value::as_str)
                    .map(str::to_string))
            }
            Ok(_) => Ok(None),
            Err(e) if e.code == REQUEST_CANCELLED => Ok(None),
            Err(e) => Err(e.message),
        }
    }

    /// A question as an `elicitation/create` form, scoped to the session (and its tool call).
    async fn form(
        &self,
        session_id: &str,
        question: &Question,
        cancel: &CancellationToken,
    ) -> Reply {
        let mut params = json!({
            "sessionId": session_id,
            "mode": "form",
            "message": question.message,
            "requestedSchema": question.schema,
        });
        if let Some(id) = &question.tool_call_id {
            params["toolCallId"] = json!(id);
        }
        let answer = self
            .outgoing
            .request(&self.outbox, "elicitation/create", params, cancel)
            .await;
        match answer {
            Ok(result) => match result["action"].as_str() {
                Some("accept") => {
                    Reply::Answered(result["content"].as_object().cloned().unwrap_or_default())
                }
                Some("decline") => Reply::Declined,
                Some("cancel") => Reply::Cancelled,
                other => Reply::CannotAsk(format!(
                    "the client answered the form with the unknown action {other:?}"
                )),
            },
            Err(e) if e.code == REQUEST_CANCELLED => Reply::Cancelled,
            Err(e) => {
                Reply::CannotAsk(format!("the client could not show the form: {}", e.message))
            }
        }
    }

    /// A question as a permission request whose options are its choices, plus "Decline".
    async fn pick(
        &self,
        session_id: &str,
        question: &Question,
        cancel: &CancellationToken,
    ) -> Reply {
        let Some(pick) = one_pick(&question.schema) else {
            return Reply::CannotAsk(
                "this client shows no forms (it did not advertise `elicitation.form`), and the \
                 question needs more than one pick among options (free text, or several fields)"
                    .into(),
            );
        };
        let mut options: Vec<Value> = pick
            .choices
            .iter()
            .enumerate()
            .map(|(i, (_, label))| {
                json!({ "optionId": format!("choice_{i}"), "name": label, "kind": "allow_once" })
            })
            .collect();
        options.push(json!({ "optionId": DECLINE, "name": "Decline", "kind": "reject_once" }));
        // A question of an MCP server that names no call (`mcp/running.rs`) gets an id of its own.
        let tool_call_id = question
            .tool_call_id
            .clone()
            .unwrap_or_else(|| new_id("ask"));
        let params = json!({
            "sessionId": session_id,
            "toolCall": { "toolCallId": tool_call_id, "title": question.message },
            "options": options,
        });
        match self.choose(params, cancel).await {
            Ok(Some(id)) if id == DECLINE => Reply::Declined,
            Ok(Some(id)) => match id.strip_prefix("choice_").and_then(|i| i.parse().ok()) {
                Some(index) => pick.answer(index).map_or_else(
                    || Reply::CannotAsk(format!("the client chose an unknown option `{id}`")),
                    Reply::Answered,
                ),
                None => Reply::CannotAsk(format!("the client chose an unknown option `{id}`")),
            },
            Ok(None) => Reply::Cancelled,
            Err(message) => Reply::CannotAsk(format!("the permission request failed: {message}")),
        }
    }
}

/// The option that declines a question asked as a permission request.
const DECLINE: &str = "decline";

impl Approver for AcpClient {
    fn ask<'a>(
        &'a self,
        session_id: &'a str,
        ask: &'a PermissionAsk,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(self.choose(permission_request(session_id, ask), cancel))
    }
}

/// Questions to one connection's client: forms when it shows them (`forms`), else one pick
/// among options through the permission prompt.
pub struct AcpAsker {
    pub client: Arc<AcpClient>,
    pub forms: bool,
}

impl Asker for AcpAsker {
    fn ask<'a>(
        &'a self,
        session_id: &'a str,
        question: &'a Question,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Reply> {
        Box::pin(async move {
            let session_id = question.asked_on.as_deref().unwrap_or(session_id);
            if self.forms {
                self.client.form(session_id, question, cancel).await
            } else {
                self.client.pick(session_id, question, cancel).await
            }
        })
    }
}

fn permission_request(session_id: &str, ask: &PermissionAsk) -> Value {
    let options: Vec<Value> = ask
        .options
        .iter()
        .map(|o| json!({ "optionId": o.id, "name": o.name, "kind": kind(o.kind) }))
        .collect();
    let mut tool_call = json!({
        "toolCallId": ask.tool_call_id,
        "title": ask.title,
        "kind": ask.kind,
        "status": "pending",
    });
    let mut content = diff_content(&ask.diffs);
    if let Some(text) = &ask.description {
        content.insert(0, text_content(text));
    }
    if !content.is_empty() {
        tool_call["content"] = Value::Array(content);
    }
    if let Some(raw_input) = &ask.raw_input {
        tool_call["rawInput"] = raw_input.clone();
    }
    if let Some(link) = &ask.subagent {
        tool_call = attributed(tool_call, link);
    }
    json!({ "sessionId": session_id, "toolCall": tool_call, "options": options })
}

fn kind(kind: OptionKind) -> &'static str {
    match kind {
        OptionKind::AllowOnce => "allow_once",
        OptionKind::AllowAlways => "allow_always",
        OptionKind::RejectOnce => "reject_once",
        OptionKind::RejectAlways => "reject_always",
    }
}
