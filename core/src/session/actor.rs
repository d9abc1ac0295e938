//! One task per live session, serving its requests in arrival order. Prompts go on to the
//! session's turn queue so a long turn never holds up `load`, `close` or a config change.

use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    LoadSessionRequest, PromptRequest, ResumeSessionRequest, SetSessionConfigOptionRequest,
    SetSessionModeRequest,
};
use serde_json::json;
use tokio::sync::mpsc;

use super::registry::SessionHandle;
use super::turns::Turns;
use super::{Session, SessionState};
use crate::acp::call::Call;
use crate::engine::Shared;
use crate::rpc::RpcError;
use crate::store::StoreOp;

pub enum SessionCall {
    Load(LoadSessionRequest),
    Resume(ResumeSessionRequest),
    Prompt(PromptRequest),
    SetConfigOption(SetSessionConfigOptionRequest),
    SetMode(SetSessionModeRequest),
    Close,
    Delete,
}

pub struct Job {
    pub epoch: u64,
    pub call: SessionCall,
    pub request: Call,
}

pub async fn run(
    shared: Arc<Shared>,
    handle: Arc<SessionHandle>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
    initial: Option<SessionState>,
) {
    let (state, interrupted) = match initial {
        Some(state) => (state, false),
        None => match restore(&shared, &handle.id).await {
            Ok(Some(restored)) => restored,
            Ok(None) => {
                return answer_rest(&shared, &handle, jobs, |job| not_found(job, &handle.id));
            }
            Err(e) => {
                tracing::error!(session = %handle.id, error = %e, "restoring a session failed");
                let error = RpcError::internal(format!("cannot read the session store: {e}"));
                return answer_rest(&shared, &handle, jobs, |job| {
                    job.request.respond(Err(error.clone()))
                });
            }
        },
    };
    let session = Arc::new(Session::new(handle.id.clone(), state));
    if interrupted {
        crate::session::recovery::close_interrupted_tool_calls(&shared, &session).await;
    }
    let turns = Turns::start(&shared, &handle, &session);
    while let Some(job) = jobs.recv().await {
        match job.call {
            SessionCall::Prompt(prompt) => turns.push(job.request, prompt, job.epoch),
            SessionCall::Load(params) => {
                crate::acp::session::load(&session, job.request, params).await
            }
            SessionCall::Resume(params) => {
                crate::acp::session::resume(&session, job.request, params)
            }
            SessionCall::SetConfigOption(params) => {
                crate::acp::config::set_config_option(&session, job.request, params)
            }
            SessionCall::SetMode(params) => {
                crate::acp::config::set_mode(&session, job.request, params)
            }
            SessionCall::Close => {
                stop(&shared, &handle, &turns).await;
                job.request.respond(Ok(json!({})));
                return reroute_rest(&shared, &handle.id, jobs);
            }
            SessionCall::Delete => {
                stop(&shared, &handle, &turns).await;
                let op = StoreOp::DeleteSession {
                    session_id: handle.id.clone(),
                };
                job.request.respond_after(op, Ok(json!({})));
                return reroute_rest(&shared, &handle.id, jobs);
            }
        }
    }
}

/// Reads the session's row, once every queued write is committed: its state, and whether a
/// turn was running when the engine last wrote it (it was interrupted).
async fn restore(
    shared: &Arc<Shared>,
    id: &Arc<str>,
) -> Result<Option<(SessionState, bool)>, String> {
    shared.outbox.flushed().await;
    let (store, id) = (shared.store.clone(), id.clone());
    let record = tokio::task::spawn_blocking(move || store.session(&id))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.0)?;
    Ok(record.map(|r| {
        (
            SessionState::from_record(&r, &shared.config, &shared.catalog),
            r.turn_running,
        )
    }))
}

/// Cancels the running and queued turns, waits until each has answered, and unregisters
/// the session so that later requests start afresh.
async fn stop(shared: &Arc<Shared>, handle: &Arc<SessionHandle>, turns: &Turns) {
    handle.cancel();
    turns.idle().await;
    shared.sessions.remove(handle);
}

/// Requests that were queued behind a `close`/`delete` belong to the next incarnation of
/// the session: route them again (they restore it, or find it deleted).
fn reroute_rest(shared: &Arc<Shared>, id: &str, mut jobs: mpsc::UnboundedReceiver<Job>) {
    jobs.close();
    while let Ok(job) = jobs.try_recv() {
        shared.sessions.route(shared, id, job.call, job.request);
    }
}

/// The session could not be brought up: unregister it and answer everything queued.
fn answer_rest(
    shared: &Arc<Shared>,
    handle: &Arc<SessionHandle>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
    answer: impl Fn(Job),
) {
    shared.sessions.remove(handle);
    jobs.close();
    while let Ok(job) = jobs.try_recv() {
        answer(job);
    }
}

fn not_found(job: Job, id: &str) {
    match job.call {
        // Deleting what is already gone succeeds, as the spec asks.
        SessionCall::Delete => job.request.respond(Ok(json!({}))),
        _ => job.request.respond(Err(RpcError::session_not_found(id))),
    }
}
