//! `session/new`, `list`, `load`, `resume` (`close` and `delete` are the session actor's,
//! since they end it).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    NewSessionRequest, NewSessionResponse, ResumeSessionRequest, ResumeSessionResponse,
    SessionInfo,
};

use super::SessionParams;
use super::call::{Call, params};
use crate::agent::new_id;
use crate::rpc::RpcError;
use crate::rpc::envelope::Params;
use crate::session::{Session, SessionState, Settings, stored_update_frame};
use crate::store::{Cursor, SessionRecord, StoreError, StoreOp, now};

/// Sessions per `session/list` page.
pub const LIST_PAGE: usize = 50;

pub fn new(call: Call, raw: Params<'_>) {
    let request: NewSessionRequest = match params(raw) {
        Ok(r) => r,
        Err(e) => return call.respond(Err(e)),
    };
    if let Err(e) = check_dirs(&request.cwd, &request.additional_directories) {
        return call.respond(Err(e));
    }
    let shared = call.shared().clone();
    if let Err(e) = crate::agent::check_credential(&shared, &shared.config.default_model()) {
        return call.respond(Err(e));
    }
    warn_unsupported_mcp(request.mcp_servers.len());
    let id: Arc<str> = Arc::from(new_id("sess"));
    let state = SessionState {
        cwd: path_string(&request.cwd),
        additional_dirs: request
            .additional_directories
            .iter()
            .map(path_string)
            .collect(),
        title: None,
        settings: Settings::defaults(&shared.config),
    };
    let at = now();
    let record = SessionRecord {
        id: id.to_string(),
        cwd: state.cwd.clone(),
        additional_dirs: state.additional_dirs.clone(),
        title: None,
        created_at: at.clone(),
        updated_at: at,
        parent_id: None,
        config: state.settings.to_value(),
        turn_running: false,
    };
    let settings = state.settings.clone();
    shared.sessions.create(&shared, id.clone(), state);
    let response = NewSessionResponse::new(id.to_string())
        .modes(super::config::modes(&settings))
        .config_options(super::config::options(&settings, &shared.catalog));
    let response = serde_json::to_value(response).map_err(|e| RpcError::internal(e.to_string()));
    call.respond_after(StoreOp::CreateSession(record), response);
}

pub async fn list(call: Call, request: ListSessionsRequest) {
    let cursor = match request.cursor.as_deref().map(|c| Cursor::parse(c).ok_or(c)) {
        None => None,
        Some(Ok(cursor)) => Some(cursor),
        Some(Err(bad)) => {
            return call.respond(Err(RpcError::invalid_params(format!(
                "`cursor`: `{bad}` is not a cursor this agent issued"
            ))));
        }
    };
    let cwd = request.cwd.as_deref().map(path_string);
    let shared = call.shared().clone();
    shared.outbox.flushed().await;
    let store = shared.store.clone();
    let page =
        tokio::task::spawn_blocking(move || store.list(cwd.as_deref(), cursor.as_ref(), LIST_PAGE))
            .await;
    let page = match page {
        Ok(Ok(page)) => page,
        Ok(Err(e)) => {
            return call.respond(Err(RpcError::internal(format!(
                "cannot read the session store: {e}"
            ))));
        }
        Err(e) => return call.respond(Err(RpcError::internal(e.to_string()))),
    };
    let sessions = page.sessions.into_iter().map(info).collect();
    call.reply(Ok(
        ListSessionsResponse::new(sessions).next_cursor(page.next_cursor)
    ));
}

fn info(record: SessionRecord) -> SessionInfo {
    let mut info = SessionInfo::new(record.id, record.cwd)
        .title(record.title)
        .updated_at(record.updated_at);
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

/// Replays the log as the client first saw it — every `session/update` before the answer.
pub async fn load(session: &Arc<Session>, call: Call, request: LoadSessionRequest) {
    warn_unsupported_mcp(request.mcp_servers.len());
    let shared = call.shared().clone();
    adopt_dirs(
        &call,
        session,
        &request.cwd,
        &request.additional_directories,
    );
    shared.outbox.flushed().await;
    let (store, outbox, id) = (
        shared.store.clone(),
        shared.outbox.clone(),
        session.id.clone(),
    );
    // Each frame is queued as soon as it is built, so the delivery thread hands the first
    // ones to the host while the rest are still being made.
    let replayed = tokio::task::spawn_blocking(move || {
        for update in store.updates(&id)? {
            outbox.frame(stored_update_frame(&id, &update));
        }
        Ok::<_, StoreError>(())
    });
    match replayed.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            return call.respond(Err(RpcError::internal(format!(
                "cannot read the session log: {e}"
            ))));
        }
        Err(e) => return call.respond(Err(RpcError::internal(e.to_string()))),
    }
    let settings = session.state().settings.clone();
    call.reply(Ok(LoadSessionResponse::new()
        .modes(super::config::modes(&settings))
        .config_options(super::config::options(
            &settings,
            &shared.catalog,
        ))));
}

/// Reattaches to a stored session without replaying it.
pub fn resume(session: &Arc<Session>, call: Call, request: ResumeSessionRequest) {
    adopt_dirs(
        &call,
        session,
        &request.cwd,
        &request.additional_directories,
    );
    let settings = session.state().settings.clone();
    let catalog = &call.shared().catalog;
    let response = ResumeSessionResponse::new()
        .modes(super::config::modes(&settings))
        .config_options(super::config::options(&settings, catalog));
    call.reply(Ok(response));
}

/// The client re-sends the workspace roots on load and resume; they replace the stored
/// ones (a project may have moved since).
fn adopt_dirs(call: &Call, session: &Session, cwd: &Path, additional: &[PathBuf]) {
    let cwd = path_string(cwd);
    let additional: Vec<String> = additional.iter().map(path_string).collect();
    let mut state = session.state();
    if state.cwd == cwd && state.additional_dirs == additional {
        return;
    }
    state.cwd.clone_from(&cwd);
    state.additional_dirs.clone_from(&additional);
    let op = StoreOp::SetDirs {
        session_id: session.id.clone(),
        cwd,
        additional_dirs: additional,
    };
    call.shared().outbox.write(op, None);
}

fn check_dirs(cwd: &Path, additional: &[PathBuf]) -> Result<(), RpcError> {
    if !cwd.is_absolute() {
        return Err(RpcError::invalid_params(format!(
            "`cwd` must be an absolute path, got `{}`",
            cwd.display()
        )));
    }
    match additional.iter().position(|d| !d.is_absolute()) {
        Some(i) => Err(RpcError::invalid_params(format!(
            "`additionalDirectories[{i}]` must be an absolute path, got `{}`",
            additional[i].display()
        ))),
        None => Ok(()),
    }
}

fn path_string(path: impl AsRef<Path>) -> String {
    path.as_ref().to_string_lossy().into_owned()
}

fn warn_unsupported_mcp(count: usize) {
    if count > 0 {
        tracing::warn!(count, "MCP servers are not supported yet; ignoring them");
    }
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
