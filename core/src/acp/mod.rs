//! The ACP method handlers, and the routing of each inbound message to one of them.
//!
//! Cheap requests (`initialize`, `session/new`) are answered on the caller's thread, which
//! keeps their order with whatever the client sends next. Requests naming a session are
//! queued on that session's actor, in arrival order. Notifications act at once.

pub mod call;
pub mod config;
pub mod initialize;
pub mod prompt;
pub mod session;

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use self::call::{Call, params};
use crate::engine::Shared;
use crate::rpc::envelope::Params;
use crate::rpc::{Inbound, RequestId, RpcError};
use crate::session::actor::SessionCall;

pub fn dispatch(shared: &Arc<Shared>, inbound: Inbound) {
    match inbound {
        Inbound::Response { id, outcome } => {
            if !shared.outgoing.resolve(&id, outcome) {
                tracing::debug!(%id, "ignoring a response to a request we never sent");
            }
        }
        Inbound::Notification { method, params } => notification(shared, &method, params),
        Inbound::Request { id, method, params } => request(shared, id, &method, params),
    }
}

/// The members of the notifications we act on; notifications are never answered, so
/// params that don't fit are ignored.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct NotificationParams {
    session_id: Option<String>,
    request_id: Option<Value>,
}

fn notification(shared: &Arc<Shared>, method: &str, params: Params<'_>) {
    let read = || serde_json::from_str::<NotificationParams>(params.get()).unwrap_or_default();
    match method {
        "session/cancel" => {
            if let Some(id) = read().session_id {
                shared.sessions.cancel(&id);
            }
        }
        "$/cancel_request" => {
            if let Some(id) = read().request_id {
                shared.inflight.cancel(&id);
            }
        }
        // Unknown notifications (including `_…` extensions and other `$/…`) are ignored.
        _ => tracing::debug!(method, "ignoring notification"),
    }
}

fn request(shared: &Arc<Shared>, id: RequestId, method: &str, params: Params<'_>) {
    if method != "initialize" && !shared.is_initialized() {
        let error = RpcError::invalid_request("The client must call `initialize` first");
        return shared.respond(&id, Err(error));
    }
    let Some(token) = shared.inflight.begin(&id) else {
        let error = RpcError::invalid_request("A request with this id is still in flight");
        return shared.respond(&id, Err(error));
    };
    let call = Call::new(shared.clone(), id, token);
    match method {
        "initialize" => initialize::initialize(call, params),
        "authenticate" => initialize::authenticate(call, params),
        "session/new" => session::new(call, params),
        "session/list" => match call::params(params) {
            Ok(request) => {
                shared.runtime.spawn(session::list(call, request));
            }
            Err(e) => call.respond(Err(e)),
        },
        "session/load" => route(call, params, SessionCall::Load),
        "session/resume" => route(call, params, SessionCall::Resume),
        "session/prompt" => route(call, params, SessionCall::Prompt),
        "session/set_config_option" => route(call, params, SessionCall::SetConfigOption),
        "session/set_mode" => route(call, params, SessionCall::SetMode),
        "session/close" => route_by_id(call, params, SessionCall::Close),
        "session/delete" => route_by_id(call, params, SessionCall::Delete),
        _ => call.respond(Err(RpcError::method_not_found(method))),
    }
}

/// Parses the params (answering `-32602` if they are bad) and queues the call on the
/// session they name.
fn route<P, F>(call: Call, raw: Params<'_>, wrap: F)
where
    P: serde::de::DeserializeOwned + SessionParams,
    F: FnOnce(P) -> SessionCall,
{
    let parsed = match params::<P>(raw).and_then(|p| p.validate().map(|()| p)) {
        Ok(p) => p,
        Err(e) => return call.respond(Err(e)),
    };
    let id = parsed.session_id().to_string();
    let shared = call.shared().clone();
    shared.sessions.route(&shared, &id, wrap(parsed), call);
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionIdOnly {
    session_id: String,
}

fn route_by_id(call: Call, raw: Params<'_>, session_call: SessionCall) {
    match params::<SessionIdOnly>(raw) {
        Ok(p) => {
            let shared = call.shared().clone();
            shared
                .sessions
                .route(&shared, &p.session_id, session_call, call);
        }
        Err(e) => call.respond(Err(e)),
    }
}

/// Params that name a session and can be checked before they are queued.
pub trait SessionParams {
    fn session_id(&self) -> &str;
    fn validate(&self) -> Result<(), RpcError> {
        Ok(())
    }
}
