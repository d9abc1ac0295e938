//! The live sessions, by id. Routing a request to a session that is not live starts its
//! actor, which restores it from the store (or answers "not found"): any request naming a
//! stored session finds it, even after a restart.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::SessionState;
use super::actor::{self, Job};
use super::services::SessionServices;
use crate::context::EngineContext;

/// The entry of one live (or restoring) session.
pub struct SessionHandle {
    pub id: Arc<str>,
    jobs: mpsc::UnboundedSender<Job>,
    cancel: Mutex<CancelState>,
    /// Set once the session is up, so the engine can shut its services down when it closes.
    services: OnceLock<Arc<SessionServices>>,
}

/// `session/cancel` bumps the epoch and fires the running turn's token. A prompt queued
/// under an older epoch is answered `cancelled` without running.
#[derive(Default)]
struct CancelState {
    epoch: u64,
    running: Option<CancellationToken>,
}

impl SessionHandle {
    fn cancel_state(&self) -> MutexGuard<'_, CancelState> {
        self.cancel.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn epoch(&self) -> u64 {
        self.cancel_state().epoch
    }

    pub fn cancel(&self) {
        let mut state = self.cancel_state();
        state.epoch += 1;
        if let Some(token) = &state.running {
            token.cancel();
        }
    }

    /// Marks `token` as the running turn's, unless a cancel came after the prompt was
    /// queued (then returns false and the prompt must answer `cancelled`).
    pub fn start_turn(&self, queued_at: u64, token: &CancellationToken) -> bool {
        let mut state = self.cancel_state();
        if queued_at < state.epoch || token.is_cancelled() {
            return false;
        }
        state.running = Some(token.clone());
        true
    }

    pub fn end_turn(&self) {
        self.cancel_state().running = None;
    }

    pub fn set_services(&self, services: Arc<SessionServices>) {
        let _ = self.services.set(services);
    }
}

#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<Arc<str>, Arc<SessionHandle>>>,
    /// The running subagents, by their own session id: a client that shows them as child
    /// sessions may cancel one (never listed, loaded or prompted).
    children: Arc<Mutex<HashMap<String, CancellationToken>>>,
}

/// A running subagent's place in [`Sessions`]; dropping it takes the child out.
pub struct ChildEntry {
    id: String,
    children: Arc<Mutex<HashMap<String, CancellationToken>>>,
}

impl Drop for ChildEntry {
    fn drop(&mut self) {
        let mut children = self.children.lock().unwrap_or_else(|p| p.into_inner());
        children.remove(&self.id);
    }
}

impl Sessions {
    fn lock(&self) -> MutexGuard<'_, HashMap<Arc<str>, Arc<SessionHandle>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `session/cancel`: never an error, whatever the session's state. A subagent's id
    /// cancels that child only.
    pub fn cancel(&self, id: &str) {
        if let Some(handle) = self.lock().get(id) {
            return handle.cancel();
        }
        let children = self.children.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(token) = children.get(id) {
            token.cancel();
        }
    }

    /// Registers a running subagent, cancelled by `token`, until the entry is dropped.
    pub fn adopt_child(&self, id: &str, token: CancellationToken) -> ChildEntry {
        let mut children = self.children.lock().unwrap_or_else(|p| p.into_inner());
        children.insert(id.to_string(), token);
        ChildEntry {
            id: id.to_string(),
            children: self.children.clone(),
        }
    }

    /// The token of the turn running in session `id`, if one is.
    pub fn running_turn(&self, id: &str) -> Option<CancellationToken> {
        self.lock().get(id)?.cancel_state().running.clone()
    }

    pub fn cancel_all(&self) {
        for handle in self.lock().values() {
            handle.cancel();
        }
    }

    /// Releases what every live session started, and waits until it is gone (the engine is
    /// closing, and its process may be about to exit).
    pub fn shutdown_all(&self) {
        let live: Vec<_> = self.lock().values().cloned().collect();
        for handle in live {
            if let Some(services) = handle.services.get() {
                services.shutdown_and_wait();
            }
        }
    }

    /// Forgets `handle` if it is still the registered one. After this, no new job can
    /// reach its queue.
    pub fn remove(&self, handle: &Arc<SessionHandle>) {
        let mut map = self.lock();
        if map.get(&handle.id).is_some_and(|h| Arc::ptr_eq(h, handle)) {
            map.remove(&handle.id);
        }
    }
}

/// Starts the actor of a brand-new session (`session/new`).
pub fn create(ctx: &Arc<EngineContext>, id: Arc<str>, state: SessionState) {
    let mut map = ctx.sessions().lock();
    let handle = spawn(ctx, id.clone(), Some(state));
    map.insert(id, handle);
}

/// Queues a job on the session's actor, starting (restoring) it if needed.
pub fn route(ctx: &Arc<EngineContext>, id: &str, job: Job) {
    let mut map = ctx.sessions().lock();
    let handle = match map.get(id) {
        Some(handle) => handle.clone(),
        None => {
            let id: Arc<str> = Arc::from(id);
            let handle = spawn(ctx, id.clone(), None);
            map.insert(id, handle.clone());
            handle
        }
    };
    let job = match job {
        Job::Run { work, .. } => Job::Run {
            epoch: handle.epoch(),
            work,
        },
        end => end,
    };
    if let Err(mpsc::error::SendError(job)) = handle.jobs.send(job) {
        // The actor is gone (it panicked, or the runtime is shutting down): release what its
        // session started and start a fresh one, which restores the session from the store.
        // During shutdown the spawn fails too, and the dropped job's responder answers -32800.
        if let Some(services) = handle.services.get() {
            services.shutdown();
        }
        let id: Arc<str> = Arc::from(id);
        let fresh = spawn(ctx, id.clone(), None);
        map.insert(id, fresh.clone());
        let _ = fresh.jobs.send(job);
    }
}

fn spawn(
    ctx: &Arc<EngineContext>,
    id: Arc<str>,
    state: Option<SessionState>,
) -> Arc<SessionHandle> {
    let (tx, rx) = mpsc::unbounded_channel();
    let handle = Arc::new(SessionHandle {
        id,
        jobs: tx,
        cancel: Mutex::new(CancelState::default()),
        services: OnceLock::new(),
    });
    ctx.runtime()
        .spawn(actor::run(ctx.clone(), handle.clone(), rx, state));
    handle
}
