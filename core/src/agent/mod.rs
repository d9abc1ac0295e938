//! The turn: log the prompt, build the model's context from the log, stream the model's
//! answer to the client (and into the log), and say why it stopped.

mod calls;
pub mod context;
mod stream;
pub mod title;

use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    ContentBlock, ContentChunk, MessageId, SessionInfoUpdate, SessionUpdate, StopReason,
};
use futures::StreamExt;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::Shared;
use crate::io::{ClientAbilities, ClientIo, Io, LocalIo};
use crate::llm::{ChatRequest, LlmError, Message, Provider, Providers, ToolResult};
use crate::rpc::RpcError;
use crate::rpc::error::INTERNAL_ERROR;
use crate::session::Session;
use crate::session::client::{self, SessionClient};
use crate::store::{StoreOp, now};
use crate::tools;

/// The model step limit counts model requests; each may ask for several tool calls.
pub async fn run_turn(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    token: &CancellationToken,
    prompt: Vec<ContentBlock>,
) -> Result<StopReason, RpcError> {
    let provider = provider_for(shared, session)?;
    log_prompt(shared, session, prompt);
    let turn = calls::Turn {
        shared,
        session,
        token,
        ctx: tool_context(shared, session, token),
    };
    for _ in 0..shared.config.max_turn_requests() {
        let request = build_request(shared, session).await?;
        if token.is_cancelled() {
            return Ok(StopReason::Cancelled);
        }
        let answer = stream_answer(shared, session, token, &*provider, request).await?;
        let stop = match answer.outcome {
            Step::Stopped(stop) => stop,
            Step::Failed(error) => return Err(error),
        };
        // Calls that will never run get their results when the context is next built
        // (`context::messages`), like calls a crash interrupted.
        if answer.calls.is_empty() || stop == StopReason::Cancelled {
            return Ok(stop);
        }
        let results = calls::run_all(&turn, answer.calls).await;
        log_results(shared, session, results);
        if token.is_cancelled() {
            return Ok(StopReason::Cancelled);
        }
    }
    Ok(StopReason::MaxTurnRequests)
}

fn provider_for(shared: &Shared, session: &Session) -> Result<Arc<dyn Provider>, RpcError> {
    let model = session.state().settings.model.clone();
    check_credential(shared, &model)
}

/// The provider of `model`, if it has a credential.
pub fn check_credential(shared: &Shared, model: &str) -> Result<Arc<dyn Provider>, RpcError> {
    let provider_name = shared
        .catalog
        .iter()
        .find(|m| m.id == model)
        .map_or("openai", |m| m.provider.as_str());
    let provider = shared.providers.by_name(provider_name);
    if provider.has_credential() {
        Ok(provider)
    } else {
        Err(RpcError::auth_required(Providers::credential_hint(
            provider_name,
        )))
    }
}

/// Where the session's tools run: through the client for what it advertised, else locally.
fn tool_context(
    shared: &Arc<Shared>,
    session: &Session,
    token: &CancellationToken,
) -> tools::Context {
    let (cwd, roots) = {
        let state = session.state();
        let mut roots = vec![PathBuf::from(&state.cwd)];
        roots.extend(state.additional_dirs.iter().map(PathBuf::from));
        (PathBuf::from(&state.cwd), roots)
    };
    let abilities = client::abilities(shared);
    let io: Arc<dyn Io> = if abilities == ClientAbilities::default() {
        Arc::new(LocalIo)
    } else {
        let requests = SessionClient {
            shared: shared.clone(),
            session_id: session.id.clone(),
            turn: token.clone(),
        };
        Arc::new(ClientIo::new(Arc::new(requests), abilities))
    };
    tools::Context {
        cwd,
        roots,
        io,
        limits: shared.config.tool_limits(),
        cancel: token.clone(),
    }
}

fn log_results(shared: &Shared, session: &Session, results: Vec<ToolResult>) {
    session.record_for_model(
        shared,
        json!({ "message": Message::ToolResults { results } }),
    );
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
        tools: shared.tools.specs(),
    })
}

enum Step {
    Stopped(StopReason),
    Failed(RpcError),
}

struct Streamed {
    outcome: Step,
    calls: Vec<calls::ModelCall>,
}

/// One model request, streamed to the client and logged. A provider failure before any
/// output is an error; after that, what streamed stays in the log either way.
async fn stream_answer(
    shared: &Arc<Shared>,
    session: &Session,
    token: &CancellationToken,
    provider: &dyn Provider,
    request: ChatRequest,
) -> Result<Streamed, RpcError> {
    // Dropping the future or the stream drops the HTTP connection: cancel is immediate.
    let mut events = tokio::select! {
        biased;
        () = token.cancelled() => return Ok(Streamed { outcome: Step::Stopped(StopReason::Cancelled), calls: Vec::new() }),
        started = provider.stream(request) => started.map_err(provider_error)?,
    };
    let mut answer = stream::Answer::new();
    // An event read ahead while merging deltas, to be handled next.
    let mut ahead = None;
    let outcome = loop {
        let next = match ahead.take() {
            Some(next) => next,
            None => tokio::select! {
                biased;
                () = token.cancelled() => break Step::Stopped(StopReason::Cancelled),
                next = events.next() => next,
            },
        };
        match next {
            None => break Step::Stopped(answer.stop_reason()),
            Some(Err(e)) => break Step::Failed(provider_error(e)),
            Some(Ok(event)) => {
                let (event, next) = stream::merge_ready(event, &mut events);
                answer.take(shared, session, event);
                ahead = next;
            }
        }
    };
    // What streamed is part of the conversation even when the turn ends early.
    answer.log(shared, session);
    answer.report_usage(shared, session);
    let calls = match outcome {
        Step::Failed(_) => Vec::new(),
        _ => answer.tool_calls(),
    };
    Ok(Streamed { outcome, calls })
}

fn provider_error(e: LlmError) -> RpcError {
    RpcError::new(INTERNAL_ERROR, format!("The model provider failed: {e}"))
        .with_data(json!({ "status": e.status, "message": e.message }))
}

pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}
