//! The session lifecycle: `session/new`, `list`, `load`, `resume`, `close`, `delete` (a
//! fork is born in `fork.rs`).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    NewSessionRequest, NewSessionResponse, ResumeSessionRequest, ResumeSessionResponse,
    SessionInfo, SystemPrompt,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::list_cache::ListKey;
use super::opening::{
    after_answer, check_cwd, check_dirs, connect_servers, path_string, path_strings,
};
use super::responder::{Responder, params};
use super::system_prompt::appended_text;
use super::{SessionParams, errors, mcp, schedule};
use crate::context::EngineContext;
use crate::ids::new_id;
use crate::mcp::{McpServerSpec, McpServers};
use crate::rpc::RpcError;
use crate::rpc::envelope::Params;
use crate::session::actor::{Job, LiveSession, Unavailable};
use crate::session::{SessionState, Settings, registry};
use crate::store::{
    Cursor, ListPage, ListedSession, LogPlace, Reader, SessionRecord, StoreError, StoreOp, Version,
    now,
};

/// Sessions per `session/list` page.
pub const LIST_PAGE: usize = 50;

pub fn new(responder: Responder, raw: Params<'_>) {
    let (request, requested): (NewSessionRequest, _) = match mcp::params_with_servers(raw) {
        Ok(parsed) => parsed,
        Err(e) => return responder.respond(Err(e)),
    };
    if let Err(e) = check_dirs(&request.cwd, &request.additional_directories) {
        return responder.respond(Err(e));
    }
    let client_system_prompt = match appended_text(request.system_prompt.as_ref()) {
        Ok(text) => text,
        Err(e) => return responder.respond(Err(e)),
    };
    let ctx = responder.ctx().clone();
    if let Err(e) = crate::agent::check_credential(&ctx, &ctx.resolved().default_model) {
        return responder.respond(Err(errors::turn_error(e)));
    }
    let id: Arc<str> = Arc::from(new_id("sess"));
    let at = now();
    let state = SessionState {
        cwd: path_string(&request.cwd),
        additional_dirs: path_strings(&request.additional_directories),
        title: None,
        title_source: None,
        settings: Settings::defaults(ctx.resolved()),
        created_at: at.clone(),
        client_system_prompt,
    };
    let record = SessionRecord {
        id: id.to_string(),
        cwd: state.cwd.clone(),
        additional_dirs: state.additional_dirs.clone(),
        title: None,
        created_at: at.clone(),
        updated_at: at,
        parent_id: None,
        config: state.settings.to_value(),
        orphaned_turn: false,
        client_system_prompt: state.client_system_prompt.clone(),
        title_source: None,
    };
    let settings = state.settings.clone();
    // Queued before the answer, so the row is committed before the client learns the id.
    ctx.write(StoreOp::CreateSession(record));
    let servers = mcp::connect(&ctx, &id, requested, &state.cwd, &state.additional_dirs);
    registry::create(&ctx, id.clone(), state);
    let response = NewSessionResponse::new(id.to_string())
        .modes(super::config::modes(&settings))
        .config_options(super::config::options(&settings, ctx.catalog()))
        .meta(servers.as_deref().map(mcp::meta));
    responder.reply(Ok(response));
    // After the answer, so that no report of a server and no command list precedes it.
    let job = Job::run(move |live| {
        Box::pin(async move {
            if let Ok(live) = live {
                let released = live.session.services().set_mcp(servers.clone());
                after_answer(&live, servers.as_deref(), released);
            }
        })
    });
    registry::route(&ctx, &id, job);
}

/// Answered on the caller's thread when the store can be read at once (nothing pending, a
/// connection free: `Context::read_now`); otherwise after the pending writes. Either way it
/// sees every write queued before it, but not the effect of jobs still queued on a session (a
/// `delete` not yet run): the list is not ordered with them, as it never was. The same request with nothing
/// committed since the last is answered with the last answer (`list_cache.rs`). A `cwd`
/// filter must be absolute, as every `cwd` a session is opened with, and is spelled as they
/// are stored (`opening::path_string`: `/x/cwd/` finds the sessions of `/x/cwd`).
pub fn list(responder: Responder, raw: Params<'_>) {
    let request: ListSessionsRequest = match params(raw) {
        Ok(r) => r,
        Err(e) => return responder.respond(Err(e)),
    };
    if let Some(Err(e)) = request.cwd.as_deref().map(check_cwd) {
        return responder.respond(Err(e));
    }
    let cursor = match request.cursor.as_deref().map(|c| Cursor::parse(c).ok_or(c)) {
        None => None,
        Some(Ok(cursor)) => Some(cursor),
        Some(Err(bad)) => {
            return responder.respond(Err(RpcError::invalid_params(format!(
                "`cursor`: `{bad}` is not a cursor this agent issued"
            ))));
        }
    };
    let key = ListKey {
        cwd: request.cwd.as_deref().map(path_string),
        cursor: request.cursor,
    };
    let edge = responder.edge().clone();
    let page = move |reader: &Reader<'_>| -> Result<Listed, StoreError> {
        let version = reader.version()?;
        if let Some(answer) = edge.list_cache.get(&key, version) {
            return Ok(Listed::Cached(answer));
        }
        let page = reader.list(key.cwd.as_deref(), cursor.as_ref(), LIST_PAGE)?;
        Ok(Listed::Read(key.clone(), version, page))
    };
    let ctx = responder.ctx().clone();
    if let Some(listed) = ctx.read_now(&page) {
        return answer_list(responder, listed);
    }
    ctx.runtime().spawn(async move {
        let listed = responder.ctx().read(page).await;
        answer_list(responder, listed);
    });
}

/// A page of the list: the last answer again, or read from the store at a version.
enum Listed {
    Cached(Arc<RawValue>),
    Read(ListKey, Version, ListPage),
}

fn answer_list(responder: Responder, listed: Result<Listed, StoreError>) {
    match listed {
        Ok(Listed::Cached(answer)) => responder.reply_raw(&answer),
        Ok(Listed::Read(key, version, page)) => {
            let sessions = page.sessions.into_iter().map(info).collect();
            let response = ListSessionsResponse::new(sessions).next_cursor(page.next_cursor);
            match serde_json::value::to_raw_value(&response) {
                Ok(answer) => {
                    let answer: Arc<RawValue> = Arc::from(answer);
                    responder
                        .edge()
                        .list_cache
                        .put(key, version, answer.clone());
                    responder.reply_raw(&answer);
                }
                Err(e) => responder.respond(Err(RpcError::internal(format!(
                    "cannot serialize the result: {e}"
                )))),
            }
        }
        Err(e) => responder.respond(Err(RpcError::internal(format!(
            "cannot read the session store: {e}"
        )))),
    }
}

fn info(record: ListedSession) -> SessionInfo {
    let mut info = SessionInfo::new(record.id, record.cwd)
        .title(record.title)
        .updated_at(record.updated_at);
    if let Some(parent) = &record.parent_id {
        info = info.meta(super::fork::lineage(parent, record.fork_event_id));
    }
    if !record.additional_dirs.is_empty() {
        info = info.additional_directories(
            record
                .additional_dirs
                .into_iter()
                .map(PathBuf::from)
                .collect(),
        );
    }
    info
}

/// Replays the log as the client first saw it — every `session/update` before the answer. A
/// session already live here is first caught up with what other processes on the data dir did
/// to it (`session/catch_up.rs`): its interrupted turns closed, its context read back.
pub fn load(responder: Responder, raw: Params<'_>) {
    let (request, requested, client_system_prompt) = match reopening::<LoadSessionRequest>(raw) {
        Ok(parsed) => parsed,
        Err(e) => return responder.respond(Err(e)),
    };
    let id = request.session_id.to_string();
    schedule(responder, id, |responder, live| async move {
        live.catch_up().await;
        // The servers start while the log replays.
        let (servers, released) = reopen(
            &live,
            &request.cwd,
            &request.additional_directories,
            requested,
            client_system_prompt,
        );
        if let Err(e) = replay(responder.ctx(), &live.session.id).await {
            return responder.respond(Err(RpcError::internal(format!(
                "cannot read the session log: {e}"
            ))));
        }
        let settings = live.session.state().settings.clone();
        let response = LoadSessionResponse::new()
            .modes(super::config::modes(&settings))
            .config_options(super::config::options(&settings, responder.ctx().catalog()))
            .meta(servers.as_deref().map(mcp::meta));
        responder.reply(Ok(response));
        after_answer(&live, servers.as_deref(), released);
    });
}

/// Rows a `session/load` reads at a time. After each read it waits until the host has taken
/// the frames of the read before (queued behind a mark), so what the replay has queued stays
/// within about two reads' frames whatever the log's length (a 100,000-event log queued at
/// once held about 100 MB), while the delivery thread always has the last read's to work on.
const REPLAY_ROWS: usize = 1_000;

/// Queues each stored update as soon as it is read and built, so the delivery thread hands
/// the first ones to the host while the rest are still being read.
async fn replay(ctx: &Arc<EngineContext>, id: &Arc<str>) -> Result<(), StoreError> {
    let wire = ctx.wire();
    let mut replay = wire.replay(id);
    let mut place = LogPlace::default();
    let mut previous: Option<Pin<Box<dyn Future<Output = ()> + Send + '_>>> = None;
    while !place.is_done() {
        ctx.read(|log| {
            log.next_updates(id, &mut place, REPLAY_ROWS, |update| {
                replay.frames(update, &mut |frame| ctx.send_frame(frame));
            })
        })
        .await?;
        if let Some(taken) = previous.take() {
            taken.await;
        }
        // Its first poll queues the mark behind this read's frames.
        let mut mark = Box::pin(ctx.delivered());
        if futures::poll!(mark.as_mut()).is_pending() {
            previous = Some(mark);
        }
    }
    Ok(())
}

/// Reattaches to a stored session without replaying it; caught up first, as for `load`.
pub fn resume(responder: Responder, raw: Params<'_>) {
    let (request, requested, client_system_prompt) = match reopening::<ResumeSessionRequest>(raw) {
        Ok(parsed) => parsed,
        Err(e) => return responder.respond(Err(e)),
    };
    let id = request.session_id.to_string();
    schedule(responder, id, |responder, live| async move {
        live.catch_up().await;
        let (servers, released) = reopen(
            &live,
            &request.cwd,
            &request.additional_directories,
            requested,
            client_system_prompt,
        );
        let settings = live.session.state().settings.clone();
        let response = ResumeSessionResponse::new()
            .modes(super::config::modes(&settings))
            .config_options(super::config::options(&settings, responder.ctx().catalog()))
            .meta(servers.as_deref().map(mcp::meta));
        responder.reply(Ok(response));
        after_answer(&live, servers.as_deref(), released);
    });
}

/// The params of a `load` or `resume`, checked — before the session is brought up, so a bad
/// one loads nothing — with the MCP servers and the system prompt text it brings.
fn reopening<P: DeserializeOwned + SessionParams + CarriesSystemPrompt>(
    raw: Params<'_>,
) -> Result<(P, Vec<McpServerSpec>, Option<String>), RpcError> {
    let (request, servers) = mcp::params_with_servers::<P>(raw)?;
    request.validate()?;
    let client_system_prompt = appended_text(request.system_prompt())?;
    Ok((request, servers, client_system_prompt))
}

/// The reopening requests, which may carry a `systemPrompt`.
trait CarriesSystemPrompt {
    fn system_prompt(&self) -> Option<&SystemPrompt>;
}

impl CarriesSystemPrompt for LoadSessionRequest {
    fn system_prompt(&self) -> Option<&SystemPrompt> {
        self.system_prompt.as_ref()
    }
}

impl CarriesSystemPrompt for ResumeSessionRequest {
    fn system_prompt(&self) -> Option<&SystemPrompt> {
        self.system_prompt.as_ref()
    }
}

/// What `load` and `resume` do before they answer: the roots the client re-sends replace the
/// stored ones, a system prompt text it sends replaces the stored one (without one, the
/// stored one stays), and the session gets the servers of the request that reopened it (and
/// the config's), started in those roots.
fn reopen(
    live: &LiveSession,
    cwd: &Path,
    additional: &[PathBuf],
    requested: Vec<McpServerSpec>,
    client_system_prompt: Option<String>,
) -> (Option<Arc<McpServers>>, CancellationToken) {
    adopt_dirs(live, cwd, additional);
    if let Some(text) = client_system_prompt {
        live.session.set_client_system_prompt(text);
    }
    connect_servers(live, requested)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionIdOnly {
    session_id: String,
}

pub fn close(responder: Responder, raw: Params<'_>) {
    end(responder, raw, false);
}

pub fn delete(responder: Responder, raw: Params<'_>) {
    end(responder, raw, true);
}

/// Ends the session once the jobs queued before are done; deleting what is already gone
/// succeeds, as the spec asks.
fn end(responder: Responder, raw: Params<'_>, delete: bool) {
    let id = match params::<SessionIdOnly>(raw) {
        Ok(p) => p.session_id,
        Err(e) => return responder.respond(Err(e)),
    };
    let ctx = responder.ctx().clone();
    let session_id = id.clone();
    let done = Box::new(move |ended: Result<(), Unavailable>| match ended {
        Ok(()) => responder.respond(Ok(json!({}))),
        Err(Unavailable::NotFound) if delete => responder.respond(Ok(json!({}))),
        Err(why) => responder.respond(Err(errors::unavailable(&why, &session_id))),
    });
    registry::route(&ctx, &id, Job::End { delete, done });
}

fn adopt_dirs(live: &LiveSession, cwd: &Path, additional: &[PathBuf]) {
    live.session
        .adopt_dirs(path_string(cwd), path_strings(additional));
}

impl SessionParams for LoadSessionRequest {
    fn session_id(&self) -> &str {
        &self.session_id.0
    }
    fn validate(&self) -> Result<(), RpcError> {
        check_dirs(&self.cwd, &self.additional_directories)
    }
}

impl SessionParams for ResumeSessionRequest {
    fn session_id(&self) -> &str {
        &self.session_id.0
    }
    fn validate(&self) -> Result<(), RpcError> {
        check_dirs(&self.cwd, &self.additional_directories)
    }
}
