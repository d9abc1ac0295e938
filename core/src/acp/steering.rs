//! `_session/steering {sessionId, prompt, _meta?}` — the extension claude-agent-acp and
//! codex-acp share: the user corrects the agent while it works. With a turn running, the
//! message joins its next model request, after the current tool results (`session/steering.rs`)
//! → `{outcome: "injected"}`. With none, it starts a turn of its own → `{outcome:
//! "startedNewTurn"}`, unless the client asked for a prompt instead
//! (`_meta.steering.idleBehavior: "promptRequired"`) → `{outcome: "promptRequired", reason:
//! "noRunningTurn"}`, and nothing happens.

use agent_client_protocol_schema::v1::ContentBlock;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::responder::Responder;
use super::{SessionParams, errors, on_session, prompt};
use crate::rpc::RpcError;
use crate::rpc::envelope::Params;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SteeringRequest {
    session_id: String,
    prompt: Vec<ContentBlock>,
    #[serde(rename = "_meta", default)]
    meta: Option<Value>,
}

impl SessionParams for SteeringRequest {
    fn session_id(&self) -> &str {
        &self.session_id
    }

    fn validate(&self) -> Result<(), RpcError> {
        prompt::check(&self.prompt)
    }
}

impl SteeringRequest {
    fn prompt_required(&self) -> bool {
        let behaviour = self
            .meta
            .as_ref()
            .and_then(|m| m.pointer("/steering/idleBehavior"));
        behaviour.and_then(Value::as_str) == Some("promptRequired")
    }
}

pub fn steer(responder: Responder, raw: Params<'_>) {
    on_session(
        responder,
        raw,
        |responder, request: SteeringRequest, live| async move {
            let prompt_required = request.prompt_required();
            let blocks = match prompt::accept(&live, request.prompt).await {
                Ok(blocks) => blocks,
                Err(e) => return responder.respond(Err(e)),
            };
            let outcome = match live.session.steering().offer(prompt::prompt_of(blocks)) {
                Ok(()) => json!({ "outcome": "injected" }),
                Err(_) if prompt_required => {
                    json!({ "outcome": "promptRequired", "reason": "noRunningTurn" })
                }
                Err(prompt) => {
                    // Its own turn: `session/cancel` stops it like any; nobody waits for its
                    // answer, so a failure is only logged (the client saw the turn's updates).
                    let session = live.session.id.clone();
                    live.prompt(prompt, CancellationToken::new(), move |outcome| {
                        if let Err(e) = outcome {
                            let error = errors::turn_error(e);
                            tracing::warn!(%session, error = %error.message, "a steered turn failed");
                        }
                    });
                    json!({ "outcome": "startedNewTurn" })
                }
            };
            responder.respond(Ok(outcome));
        },
    );
}
