//! The domain's requests to the ACP client, on the wire: `fs/*` and `terminal/*` for the
//! client-served workspace (`client_io::ClientPort`), and `session/request_permission` for the
//! permission prompt (`permissions::prompt::Approver`).

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::client_io::{ClientError, ClientPort};
use super::updates::{attributed, diff_content, text_content};
use crate::outbox::Outbox;
use crate::permissions::prompt::{Approver, OptionKind, PermissionAsk};
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

impl Approver for AcpClient {
    fn ask<'a>(
        &'a self,
        session_id: &'a str,
        ask: &'a PermissionAsk,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            let params = permission_request(session_id, ask);
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
