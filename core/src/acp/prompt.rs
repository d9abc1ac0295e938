//! `session/prompt` (what a prompt may contain; the turn itself is `agent::run_turn`, queued
//! per session by `session::turns`) and `session/cancel`.

use agent_client_protocol_schema::v1::{
    ContentBlock, EmbeddedResourceResource, PromptRequest, PromptResponse,
};

use super::responder::Responder;
use super::{SessionParams, errors, on_session};
use crate::agent::{Prompt, PromptBlock};
use crate::context::EngineContext;
use crate::rpc::RpcError;
use crate::rpc::envelope::Params;

/// Queues the prompt behind the session's running turn and answers when its turn ends.
pub fn prompt(responder: Responder, raw: Params<'_>) {
    on_session(
        responder,
        raw,
        |responder, request: PromptRequest, live| async move {
            let token = responder.token.clone();
            // The session serves its next job while the turn runs.
            live.prompt(prompt_of(request.prompt), token, move |outcome| {
                let response = outcome
                    .map(|stop| PromptResponse::new(errors::stop_reason(stop)))
                    .map_err(errors::turn_error);
                responder.reply(response);
            });
        },
    );
}

/// `session/cancel`: never an error, whatever the session's state.
pub fn cancel(ctx: &EngineContext, session_id: &str) {
    ctx.sessions().cancel(session_id);
}

fn prompt_of(blocks: Vec<ContentBlock>) -> Prompt {
    let blocks = blocks
        .into_iter()
        .map(|block| PromptBlock {
            text: match &block {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            },
            content: serde_json::to_value(block).unwrap_or_default(),
        })
        .collect();
    Prompt { blocks }
}

impl SessionParams for PromptRequest {
    fn session_id(&self) -> &str {
        &self.session_id.0
    }

    /// Text, resource links and embedded text resources are accepted (that is what
    /// `initialize` advertises); anything else is refused rather than silently dropped.
    fn validate(&self) -> Result<(), RpcError> {
        if self.prompt.is_empty() {
            return Err(RpcError::invalid_params(
                "`prompt` must contain at least one content block",
            ));
        }
        for (i, block) in self.prompt.iter().enumerate() {
            let refused = match block {
                ContentBlock::Text(_) | ContentBlock::ResourceLink(_) => None,
                ContentBlock::Resource(r) => match r.resource {
                    EmbeddedResourceResource::TextResourceContents(_) => None,
                    _ => Some("binary embedded resources are not supported"),
                },
                ContentBlock::Image(_) => {
                    Some("image content is not supported (promptCapabilities.image is false)")
                }
                ContentBlock::Audio(_) => {
                    Some("audio content is not supported (promptCapabilities.audio is false)")
                }
                _ => Some("this content type is not supported"),
            };
            if let Some(reason) = refused {
                return Err(RpcError::invalid_params(format!("`prompt[{i}]`: {reason}")));
            }
        }
        Ok(())
    }
}
