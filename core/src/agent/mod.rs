//! The turn: log the prompt, build the model's context from the log, stream the model's
//! answer to the client (and into the log), and say why it stopped.

pub mod context;
mod stream;
pub mod title;

use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    ContentBlock, ContentChunk, MessageId, SessionInfoUpdate, SessionUpdate, StopReason,
};
use futures::StreamExt;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::Shared;
use crate::llm::{ChatRequest, LlmError};
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
    let thinks = crate::acp::config::model_thinks(&state.settings.model, &shared.catalog);
    Ok(ChatRequest {
        thought_level: thinks.then_some(state.settings.thought_level),
        model: state.settings.model,
        system: context::system_prompt(&state.cwd, &state.additional_dirs),
        messages: context::messages(&events),
        tools: Vec::new(),
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
    let mut answer = stream::Answer::new();
    let outcome = loop {
        let next = tokio::select! {
            biased;
            () = token.cancelled() => break Ok(StopReason::Cancelled),
            next = events.next() => next,
        };
        match next {
            None => break Ok(answer.stop_reason()),
            Some(Err(e)) => break Err(provider_error(e)),
            Some(Ok(event)) => answer.take(shared, session, event),
        }
    };
    // What streamed is part of the conversation even when the turn ends early.
    answer.log(shared, session);
    outcome
}

fn provider_error(e: LlmError) -> RpcError {
    RpcError::new(INTERNAL_ERROR, format!("The model provider failed: {e}"))
        .with_data(json!({ "status": e.status, "message": e.message }))
}

pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}
