//! The turn: log the prompt, build the model's context from the log, stream the model's
//! answer to the client (and into the log), and say why it stopped.

pub mod context;
pub mod title;

use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    ContentBlock, ContentChunk, MessageId, SessionInfoUpdate, SessionUpdate, StopReason,
    TextContent,
};
use futures::StreamExt;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::Shared;
use crate::llm::{ChatRequest, FinishReason, LlmError, StreamEvent};
use crate::rpc::RpcError;
use crate::rpc::error::INTERNAL_ERROR;
use crate::session::Session;
use crate::store::{StoreOp, now};

pub async fn run_turn(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    token: &CancellationToken,
    prompt: Vec<ContentBlock>,
) -> Result<StopReason, RpcError> {
    if !shared.provider.has_credential() {
        return Err(RpcError::auth_required(
            crate::llm::openai::credential_hint(),
        ));
    }
    log_prompt(shared, session, prompt);
    let request = build_request(shared, session).await?;
    if token.is_cancelled() {
        return Ok(StopReason::Cancelled);
    }
    stream_answer(shared, session, token, request).await
}

fn log_prompt(shared: &Shared, session: &Session, prompt: Vec<ContentBlock>) {
    let first_title = {
        let mut state = session.state();
        match state.title {
            Some(_) => None,
            None => {
                state.title = title::from_prompt(&prompt);
                state.title.clone()
            }
        }
    };
    let message_id = new_id("msg");
    for block in prompt {
        let chunk = ContentChunk::new(block).message_id(MessageId::new(message_id.as_str()));
        session.record_silently(shared, SessionUpdate::UserMessageChunk(chunk));
    }
    if let Some(title) = first_title {
        shared.outbox.write(
            StoreOp::SetTitle {
                session_id: session.id.clone(),
                title: title.clone(),
            },
            None,
        );
        let info = SessionInfoUpdate::new().title(title).updated_at(now());
        session.record(shared, SessionUpdate::SessionInfoUpdate(info));
    }
}

async fn build_request(shared: &Arc<Shared>, session: &Session) -> Result<ChatRequest, RpcError> {
    shared.outbox.flushed().await;
    let (store, id) = (shared.store.clone(), session.id.clone());
    let events = tokio::task::spawn_blocking(move || store.events(&id))
        .await
        .map_err(|e| RpcError::internal(e.to_string()))?
        .map_err(|e| RpcError::internal(format!("cannot read the session log: {e}")))?;
    let state = session.state().clone();
    let mut messages = vec![context::system_prompt(&state.cwd, &state.additional_dirs)];
    messages.extend(context::messages(&events));
    Ok(ChatRequest {
        model: state.model,
        messages,
    })
}

async fn stream_answer(
    shared: &Arc<Shared>,
    session: &Session,
    token: &CancellationToken,
    request: ChatRequest,
) -> Result<StopReason, RpcError> {
    // Dropping the future or the stream drops the HTTP connection: cancel is immediate.
    let mut events = tokio::select! {
        biased;
        () = token.cancelled() => return Ok(StopReason::Cancelled),
        started = shared.provider.stream(request) => started.map_err(provider_error)?,
    };
    let (message_id, thought_id) = (new_id("msg"), new_id("msg"));
    let mut stop = StopReason::EndTurn;
    loop {
        let next = tokio::select! {
            biased;
            () = token.cancelled() => return Ok(StopReason::Cancelled),
            next = events.next() => next,
        };
        match next {
            None => return Ok(stop),
            Some(Err(e)) => return Err(provider_error(e)),
            Some(Ok(StreamEvent::Text(text))) => {
                let chunk = text_chunk(text, &message_id);
                session.record(shared, SessionUpdate::AgentMessageChunk(chunk));
            }
            Some(Ok(StreamEvent::Reasoning(text))) => {
                let chunk = text_chunk(text, &thought_id);
                session.record(shared, SessionUpdate::AgentThoughtChunk(chunk));
            }
            Some(Ok(StreamEvent::Finish(reason))) => stop = stop_reason(&reason),
            Some(Ok(StreamEvent::Usage { .. })) => {}
        }
    }
}

fn text_chunk(text: String, message_id: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
        .message_id(MessageId::new(message_id))
}

fn stop_reason(reason: &FinishReason) -> StopReason {
    match reason {
        FinishReason::Length => StopReason::MaxTokens,
        FinishReason::ContentFilter => StopReason::Refusal,
        FinishReason::Stop | FinishReason::ToolCalls | FinishReason::Other(_) => {
            StopReason::EndTurn
        }
    }
}

fn provider_error(e: LlmError) -> RpcError {
    RpcError::new(INTERNAL_ERROR, format!("The model provider failed: {e}"))
        .with_data(json!({ "status": e.status, "message": e.message }))
}

pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}
