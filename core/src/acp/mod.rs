//! The ACP adapter: the method table (below, one line per method → its handler in
//! `acp/<area>.rs`), the stored log format (`updates.rs`, the one builder of `session/update`
//! JSON), the wire chosen per connection at `initialize` (`wire/`: frames and the fallbacks
//! for what a client cannot show), the client port (`client.rs`), the client-served workspace
//! backend (`client_io/`) and the error mapping (`errors.rs`). Nothing below `acp/` imports
//! it; `engine.rs` wires it in.
//!
//! Cheap requests (`initialize`, `session/new`, most `session/list`s) are answered on the
//! caller's thread, which keeps their order with whatever the client sends next. Requests
//! naming a session are scheduled as jobs on that session, in arrival order. Notifications
//! act at once.

pub mod client;
mod client_io;
mod config;
mod errors;
mod fork;
mod images;
mod initialize;
mod list_cache;
mod mcp;
mod opening;
mod prompt;
mod responder;
mod rewind;
mod session;
mod session_failure;
mod steering;
mod system_prompt;
mod title;
pub mod updates;
pub mod wire;

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use self::client::AcpClient;
use self::responder::{Responder, params};
use crate::context::EngineContext;
use crate::rpc::envelope::{self, Params};
use crate::rpc::inflight::Inflight;
use crate::rpc::outgoing::Outgoing;
use crate::rpc::{Inbound, RequestId, RpcError};
use crate::session::actor::{Job, LiveSession};
use crate::session::registry;

/// The protocol edge of one engine: the domain's context, the client's requests in flight,
/// and ours waiting for the client's answers.
pub struct Edge {
    ctx: Arc<EngineContext>,
    inflight: Inflight,
    outgoing: Arc<Outgoing>,
    /// Our requests to the client, on the wire.
    client: Arc<AcpClient>,
    initialized: AtomicBool,
    /// The `initialize` answer, serialized at the first one: it depends on the host
    /// (`acp/initialize.rs`) and on one thing the client sends, whether it takes terminal
    /// sign-in (the index), and it is the request whose round trip embedders measure first.
    initialize_answer: [OnceLock<Box<RawValue>>; 2],
    /// The last `session/list` answer and the store's version it was read at.
    list_cache: list_cache::ListCache,
}

impl Edge {
    pub fn new(ctx: Arc<EngineContext>, outgoing: Arc<Outgoing>, client: Arc<AcpClient>) -> Self {
        Edge {
            ctx,
            inflight: Inflight::default(),
            outgoing,
            client,
            initialized: AtomicBool::new(false),
            initialize_answer: Default::default(),
            list_cache: list_cache::ListCache::default(),
        }
    }

    pub fn ctx(&self) -> &Arc<EngineContext> {
        &self.ctx
    }

    /// Whether a client has called `initialize`. Before, every request but it is refused and
    /// no session exists, so no frame needs the store or the runtime (`Engine::send` starts
    /// a prepared engine at the first frame after it).
    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::Acquire)
    }

    /// Queues the answer to a client request that never reached a handler.
    pub fn respond(&self, id: &RequestId, outcome: Result<Value, RpcError>) {
        self.ctx.send_frame(envelope::response_frame(id, &outcome));
    }

    /// Engine shutdown: withdraws every request in both directions.
    pub fn cancel_all(&self) {
        self.inflight.cancel_all();
        self.outgoing.cancel_all();
    }

    /// Whether every client request has been answered.
    pub fn is_idle(&self) -> bool {
        self.inflight.is_empty()
    }
}

pub fn dispatch(edge: &Arc<Edge>, inbound: Inbound) {
    match inbound {
        Inbound::Response { id, outcome } => {
            if !edge.outgoing.resolve(&id, outcome) {
                tracing::debug!(%id, "ignoring a response to a request we never sent");
            }
        }
        Inbound::Notification { method, params } => notification(edge, &method, params),
        Inbound::Request { id, method, params } => request(edge, id, &method, params),
    }
}

/// The method table.
fn request(edge: &Arc<Edge>, id: RequestId, method: &str, params: Params<'_>) {
    if method != "initialize" && !edge.is_initialized() {
        let error = RpcError::invalid_request("The client must call `initialize` first");
        return edge.respond(&id, Err(error));
    }
    let Some(token) = edge.inflight.begin(&id) else {
        let error = RpcError::invalid_request("A request with this id is still in flight");
        return edge.respond(&id, Err(error));
    };
    let responder = Responder::new(edge.clone(), id, token);
    match method {
        "initialize" => initialize::initialize(responder, params),
        "authenticate" => initialize::authenticate(responder, params),
        "session/new" => session::new(responder, params),
        "session/list" => session::list(responder, params),
        "session/load" => session::load(responder, params),
        "session/resume" => session::resume(responder, params),
        "session/close" => session::close(responder, params),
        "session/delete" => session::delete(responder, params),
        "session/fork" => fork::fork(responder, params),
        "session/set_title" => title::set_title(responder, params),
        "session/prompt" => prompt::prompt(responder, params),
        "session/set_config_option" => config::set_config_option(responder, params),
        "session/set_mode" => config::set_mode(responder, params),
        "_session/steering" => steering::steer(responder, params),
        "_hearth/session/rewind" => rewind::rewind(responder, params),
        _ => responder.respond(Err(RpcError::method_not_found(method))),
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

fn notification(edge: &Edge, method: &str, params: Params<'_>) {
    let read = || serde_json::from_str::<NotificationParams>(params.get()).unwrap_or_default();
    match method {
        "session/cancel" => {
            if let Some(id) = read().session_id {
                prompt::cancel(&edge.ctx, &id);
            }
        }
        "$/cancel_request" => {
            if let Some(id) = read().request_id {
                edge.inflight.cancel(&id);
            }
        }
        // Unknown notifications (including `_…` extensions and other `$/…`) are ignored.
        _ => tracing::debug!(method, "ignoring notification"),
    }
}

/// Parses params that name a session (answering `-32602` if they are bad) and schedules
/// `work` on that session, which runs once it is live, after the jobs queued before it.
fn on_session<P, F, Fut>(responder: Responder, raw: Params<'_>, work: F)
where
    P: DeserializeOwned + SessionParams + Send + 'static,
    F: FnOnce(Responder, P, LiveSession) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    match params::<P>(raw).and_then(|p| p.validate().map(|()| p)) {
        Ok(request) => {
            let id = request.session_id().to_string();
            schedule(responder, id, move |responder, live| {
                work(responder, request, live)
            });
        }
        Err(e) => responder.respond(Err(e)),
    }
}

/// Schedules `work` on the session `id`; a session that cannot be brought up is answered
/// for (`-32002` when there is none).
fn schedule<F, Fut>(responder: Responder, id: String, work: F)
where
    F: FnOnce(Responder, LiveSession) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let ctx = responder.ctx().clone();
    let session_id = id.clone();
    let job = Job::run(move |live| {
        Box::pin(async move {
            match live {
                Ok(live) => work(responder, live).await,
                Err(why) => responder.respond(Err(errors::unavailable(&why, &session_id))),
            }
        })
    });
    registry::route(&ctx, &id, job);
}

/// Params that name a session and can be checked before they are queued.
pub trait SessionParams {
    fn session_id(&self) -> &str;
    fn validate(&self) -> Result<(), RpcError> {
        Ok(())
    }
}
