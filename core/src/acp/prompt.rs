//! `session/prompt` (what a prompt may contain; the turn itself is `agent::run_turn`, queued
//! per session by `session::turns`) and `session/cancel`.
//!
//! A prompt is checked whole before it is queued, so a refused one leaves nothing in the log:
//! its shape first (`validate`), then, on the live session, whether the current model takes
//! images and whether each image can be read and decoded (`accept`).

use agent_client_protocol_schema::v1::{
    ContentBlock, EmbeddedResourceResource, PromptRequest, PromptResponse, Usage as AcpUsage,
};

use super::responder::Responder;
use super::{SessionParams, errors, images, on_session};
use crate::agent::TurnEnd;
use crate::chat::{Prompt, PromptBlock};
use crate::context::EngineContext;
use crate::rpc::RpcError;
use crate::rpc::envelope::Params;
use crate::session::actor::LiveSession;
use crate::tools::Tally;

/// Queues the prompt behind the session's running turn and answers when its turn ends.
pub fn prompt(responder: Responder, raw: Params<'_>) {
    on_session(
        responder,
        raw,
        |responder, request: PromptRequest, live| async move {
            let blocks = match accept(&live, request.prompt).await {
                Ok(blocks) => blocks,
                Err(e) => return responder.respond(Err(e)),
            };
            let token = responder.token.clone();
            let session = live.session.clone();
            // The session serves its next job while the turn runs.
            live.prompt(prompt_of(blocks), token, move |outcome| {
                let delegated = session.take_delegated();
                let response = outcome
                    .map(|end| response(end).meta(subagents_meta(delegated)))
                    .map_err(errors::turn_error);
                responder.reply(response);
            });
        },
    );
}

/// A turn's answer: its stop reason, and its token totals as the unstable `usage` (the whole
/// prompt of each request counted as input, cached parts included).
fn response(end: TurnEnd) -> PromptResponse {
    let usage = end.usage.map(|u| {
        let input = u.input + u.cache_read + u.cache_write;
        AcpUsage::new(input + u.output, input, u.output)
            .cached_read_tokens(u.cache_read)
            .cached_write_tokens(u.cache_write)
            .thought_tokens(u.thoughts)
    });
    PromptResponse::new(errors::stop_reason(end.stop)).usage(usage)
}

/// What the turn's subagents spent, in `_meta.hearth.subagents` (none if none ran): the
/// session's own usage does not count them.
fn subagents_meta(spent: Tally) -> Option<serde_json::Map<String, serde_json::Value>> {
    if spent == Tally::default() {
        return None;
    }
    let meta = serde_json::json!({ "hearth": { "subagents": {
        "requests": spent.requests,
        "toolCalls": spent.tool_calls,
        "inputTokens": spent.input_tokens,
        "outputTokens": spent.output_tokens,
        "cachedReadTokens": spent.cached_read_tokens,
    }}});
    meta.as_object().cloned()
}

/// `session/cancel`: never an error, whatever the session's state.
pub fn cancel(ctx: &EngineContext, session_id: &str) {
    ctx.sessions().cancel(session_id);
}

/// The blocks as they will be logged: images prepared for the model (read, checked,
/// downscaled). Refused when the session's current model takes no images — never dropped.
pub async fn accept(
    live: &LiveSession,
    blocks: Vec<ContentBlock>,
) -> Result<Vec<ContentBlock>, RpcError> {
    let Some(first) = blocks
        .iter()
        .position(|b| matches!(b, ContentBlock::Image(_)))
    else {
        return Ok(blocks);
    };
    let model = live.session.state().settings.model.clone();
    if !live.session.ctx().model_sees(&model) {
        return Err(refused(
            first,
            &format!(
                "the current model `{model}` does not take images (its catalog entry would say \
                 `\"vision\": true`); send text, or switch to a model that does"
            ),
        ));
    }
    // Decoding and resizing take a core for a moment: not on the async workers.
    tokio::task::spawn_blocking(move || prepare_images(blocks))
        .await
        .map_err(|e| RpcError::internal(format!("preparing the prompt's images failed: {e}")))?
}

fn prepare_images(blocks: Vec<ContentBlock>) -> Result<Vec<ContentBlock>, RpcError> {
    blocks
        .into_iter()
        .enumerate()
        .map(|(i, block)| match block {
            ContentBlock::Image(image) => images::prepare(image)
                .map(ContentBlock::Image)
                .map_err(|why| refused(i, &format!("the image {why}"))),
            other => Ok(other),
        })
        .collect()
}

fn refused(index: usize, reason: &str) -> RpcError {
    RpcError::invalid_params(format!("`prompt[{index}]`: {reason}"))
}

pub fn prompt_of(blocks: Vec<ContentBlock>) -> Prompt {
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

    fn validate(&self) -> Result<(), RpcError> {
        check(&self.prompt)
    }
}

/// Text, images, resource links and embedded text resources are accepted (that is what
/// `initialize` advertises); anything else is refused rather than silently dropped.
pub fn check(prompt: &[ContentBlock]) -> Result<(), RpcError> {
    if prompt.is_empty() {
        return Err(RpcError::invalid_params(
            "`prompt` must contain at least one content block",
        ));
    }
    for (i, block) in prompt.iter().enumerate() {
        let reason = match block {
            ContentBlock::Text(_) | ContentBlock::ResourceLink(_) => None,
            ContentBlock::Resource(r) => match r.resource {
                EmbeddedResourceResource::TextResourceContents(_) => None,
                _ => Some("binary embedded resources are not supported".to_string()),
            },
            ContentBlock::Image(image) => images::check(image)
                .err()
                .map(|why| format!("the image {why}")),
            ContentBlock::Audio(_) => {
                Some("audio content is not supported (promptCapabilities.audio is false)".into())
            }
            _ => Some("this content type is not supported".into()),
        };
        if let Some(reason) = reason {
            return Err(refused(i, &reason));
        }
    }
    Ok(())
}
