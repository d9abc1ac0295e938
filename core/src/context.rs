//! `EngineContext`: what every part of a running engine shares — the resolved configuration,
//! the store and the outbox, the providers, the live sessions, and the ports the protocol edge
//! implements for the domain: the log format (one for the whole engine), the permission prompt,
//! and the `Connection` — what the client is shown of each event (`Wire`), which backend
//! serves its workspace and how it is asked questions (`Asker`) — which `initialize` picks from the client's protocol version and
//! capabilities. Its fields are private: each use has a method that says what it is for.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use serde_json::Value;
use serde_json::value::RawValue;

use crate::config::{Config, ModelInfo, Resolved, TerminalSignIn};
use crate::io::Workspaces;
use crate::io::process::Launcher;
use crate::lineage::ChildLink;
use crate::llm::Providers;
use crate::outbox::Outbox;
use crate::permissions::prompt::Approver;
use crate::question::Asker;
use crate::session::events::{Recorded, SessionEvent};
use crate::session::registry::Sessions;
use crate::store::{Event, Reader, RuleRow, Store, StoreError, StoreOp};
use crate::tools::{Limits, ToolDeps};

/// What the protocol edge (and, for sign-in, the host) implements for the domain.
pub struct Ports {
    /// How session events are logged and read back (ACP v1 `session/update`s).
    pub log: Arc<dyn LogFormat>,
    /// The connection until `initialize` picks one (every request but `initialize` is
    /// refused before it, so this serves nothing a client asked for).
    pub connection: Connection,
    /// Permission requests to the user.
    pub approver: Arc<dyn Approver>,
    /// The host's `hearth auth`, when it has one (the CLI does; embedding hosts don't).
    pub sign_in: Option<Arc<dyn TerminalSignIn>>,
}

/// The rows of a session's log one read takes when its model context is rebuilt
/// (`EngineContext::for_each_context_event`).
const CONTEXT_PAGE: usize = 1000;

/// The stored log's format, one for the whole engine whatever its clients speak: what an
/// event is written as, and what the domain reads back from a written one.
pub trait LogFormat: Send + Sync {
    /// The logged form of `event`.
    fn encode(&self, event: SessionEvent) -> Value;
    /// What a logged update says, as far as the model's context and crash recovery care.
    fn decode(&self, update: &Value) -> Recorded;
}

/// What one connection's client is shown: chosen at `initialize` from its protocol version and
/// capabilities, it owns every fallback for what that client cannot show.
pub trait Wire: Send + Sync {
    /// The event this client is told instead of `event`: itself, a stand-in the client can
    /// show, or nothing. What it returns is what is logged as well as sent, so that a
    /// `session/load` replays the session as the client first saw it.
    fn present(&self, event: SessionEvent) -> Option<SessionEvent>;
    /// The notification that carries a logged update to the client, live.
    fn frame(&self, session_id: &str, update: &Value) -> String;
    /// The session a permission request of `session_id` names: a subagent's own, for a
    /// client that shows subagents as child sessions.
    fn asks_on<'a>(&self, session_id: &'a str, subagent: Option<&'a ChildLink>) -> &'a str;
    /// What replays the log of `session_id` to this client, update by update.
    fn replay<'a>(&'a self, session_id: &'a str) -> Box<dyn Replay + 'a>;
}

/// One `session/load` replay, which remembers what it has shown (the subagents it announced).
pub trait Replay: Send {
    /// The notifications that replay one stored update (its logged text), in order.
    fn frames(&mut self, stored: &RawValue, out: &mut dyn FnMut(String));
}

/// What the protocol edge offers one client, chosen at `initialize`.
#[derive(Clone)]
pub struct Connection {
    pub wire: Arc<dyn Wire>,
    /// Which backend serves a session's workspace (the client's where it serves files or
    /// terminals, else local).
    pub workspaces: Arc<dyn Workspaces>,
    /// Questions to the user: a form where the client shows forms, else a permission prompt.
    pub asker: Arc<dyn Asker>,
}

/// What `Engine::ready` starts for the context.
pub struct Started {
    pub store: Arc<Store>,
    pub runtime: tokio::runtime::Handle,
}

pub struct EngineContext {
    config: Config,
    /// The config resolved against the environment at start: the default model, the models
    /// users can pick, the endpoints.
    resolved: Resolved,
    /// The tools' bounds, from the config's `tools`.
    tool_limits: Limits,
    outbox: Outbox,
    providers: Providers,
    tool_deps: ToolDeps,
    sessions: Sessions,
    /// The store and the runtime, from `Engine::ready` on: a frame that needs neither (the
    /// first `initialize`) is answered before they start (`Engine::send` says which).
    started: OnceLock<Started>,
    /// What the last `initialize` chose for its client.
    connection: RwLock<Connection>,
    log: Arc<dyn LogFormat>,
    approver: Arc<dyn Approver>,
    sign_in: Option<Arc<dyn TerminalSignIn>>,
    /// Set once the user's stored keys were first read (see `providers`).
    stored_keys_read: OnceLock<()>,
    closed: AtomicBool,
}

impl EngineContext {
    pub fn new(
        config: Config,
        resolved: Resolved,
        outbox: Outbox,
        ports: Ports,
        launcher: Arc<Launcher>,
    ) -> Self {
        let tool_deps = ToolDeps::create(&config, launcher, resolved.sandbox.clone());
        EngineContext {
            providers: Providers::new(&resolved, config.stream_idle_timeout()),
            tool_limits: Limits::from(&config.tools),
            resolved,
            tool_deps,
            config,
            outbox,
            sessions: Sessions::default(),
            started: OnceLock::new(),
            connection: RwLock::new(ports.connection),
            log: ports.log,
            approver: ports.approver,
            sign_in: ports.sign_in,
            stored_keys_read: OnceLock::new(),
            closed: AtomicBool::new(false),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn resolved(&self) -> &Resolved {
        &self.resolved
    }

    pub fn catalog(&self) -> &[ModelInfo] {
        &self.resolved.catalog
    }

    pub fn model(&self, id: &str) -> Option<&ModelInfo> {
        self.catalog().iter().find(|m| m.id == id)
    }

    /// Whether `model` takes a thinking level.
    pub fn model_thinks(&self, model: &str) -> bool {
        crate::config::model_thinks(self.catalog(), model)
    }

    /// Whether `model` takes images.
    pub fn model_sees(&self, model: &str) -> bool {
        crate::config::model_sees(self.catalog(), model)
    }

    /// The providers, with the user's stored keys read the first time: not at start, where
    /// the OS credential store (a D-Bus round trip and a runtime of its own, on Linux) would
    /// delay the first answer and cost memory an engine that never runs a turn doesn't need.
    /// Only a turn and `authenticate` ask, both off the caller's thread.
    pub fn providers(&self) -> &Providers {
        self.stored_keys_read.get_or_init(|| {
            if self.sign_in.is_none() {
                return;
            }
            // On a thread of its own: the credential store's D-Bus client blocks on a runtime
            // of its own, which tokio refuses inside a turn's task.
            std::thread::scope(|scope| {
                let read = scope.spawn(|| self.read_stored_keys());
                if read.join().is_err() {
                    tracing::error!("reading the stored keys panicked");
                }
            });
        });
        &self.providers
    }

    /// The host's terminal sign-in, if it offers one.
    pub fn sign_in(&self) -> Option<&dyn TerminalSignIn> {
        self.sign_in.as_deref()
    }

    /// Re-reads the user's stored keys, so a `hearth auth` run since start takes effect
    /// without a restart; nothing to read for a host without sign-in.
    pub fn refresh_stored_keys(&self) {
        self.read_stored_keys();
        let _ = self.stored_keys_read.set(());
    }

    fn read_stored_keys(&self) {
        if let Some(sign_in) = &self.sign_in {
            self.providers
                .refresh_stored_keys(|p| sign_in.stored_key(p));
        }
    }

    pub fn tool_limits(&self) -> &Limits {
        &self.tool_limits
    }

    pub fn tool_deps(&self) -> &ToolDeps {
        &self.tool_deps
    }

    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// Hands the context its store and runtime (`Engine::ready`, once: it checks
    /// `is_started` under its lock first).
    pub fn start(&self, started: Started) {
        let first = self.started.set(started).is_ok();
        debug_assert!(first, "the engine's context was started twice");
    }

    pub fn is_started(&self) -> bool {
        self.started.get().is_some()
    }

    fn started(&self) -> &Started {
        self.started
            .get()
            .expect("the engine starts its store and runtime before a frame that uses them")
    }

    pub fn runtime(&self) -> &tokio::runtime::Handle {
        &self.started().runtime
    }

    fn store(&self) -> &Store {
        &self.started().store
    }

    pub fn log(&self) -> &dyn LogFormat {
        &*self.log
    }

    /// What the current client is shown of each event.
    pub fn wire(&self) -> Arc<dyn Wire> {
        self.connection().wire
    }

    /// Which backend serves a session's workspace for the current client.
    pub fn workspaces(&self) -> Arc<dyn Workspaces> {
        self.connection().workspaces
    }

    /// How the current client is asked a question.
    pub fn asker(&self) -> Arc<dyn Asker> {
        self.connection().asker
    }

    fn connection(&self) -> Connection {
        self.connection
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Serves the client that just initialized (a second `initialize` replaces the first).
    pub fn connect(&self, connection: Connection) {
        *self.connection.write().unwrap_or_else(|p| p.into_inner()) = connection;
    }

    pub fn approver(&self) -> &dyn Approver {
        &*self.approver
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub fn mark_closed(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// Queues a frame that carries nothing to persist.
    pub fn send_frame(&self, frame: String) {
        self.outbox.frame(frame);
    }

    /// Queues a store write.
    pub fn write(&self, op: StoreOp) {
        self.outbox.write(op, None);
    }

    /// Queues a store write and the frame that announces it, delivered once it is committed.
    pub fn write_then_send(&self, op: StoreOp, frame: String) {
        self.outbox.write(op, Some(frame));
    }

    /// Runs `read` once every write queued before this call is committed. With nothing
    /// pending it costs no thread hop: the outbox thread is not asked, and the read runs on
    /// this worker (`block_in_place` hands the worker's other tasks to another thread while
    /// SQLite works). Call it only from the engine's runtime.
    pub async fn read<T>(
        &self,
        read: impl FnOnce(&Reader<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if self.outbox.has_pending_writes() {
            self.outbox.flushed().await;
        }
        tokio::task::block_in_place(|| read(&self.store().reader()))
    }

    /// Hands the rows a session's model context is built from to `each`, oldest first, a
    /// page of `CONTEXT_PAGE` rows per read: the read connection (on a `:memory:` store, the
    /// writer too) is let go between pages, so a long session's restore holds up other reads
    /// and commits for a page's time at most.
    pub async fn for_each_context_event(
        &self,
        id: &str,
        mut each: impl FnMut(Event),
    ) -> Result<(), StoreError> {
        let mut after = 0;
        loop {
            let page = (after, CONTEXT_PAGE);
            let read = |rows: &Reader<'_>| rows.for_each_context_event(id, page, &mut each);
            let (count, last) = self.read(read).await?;
            if count < CONTEXT_PAGE {
                return Ok(());
            }
            after = last;
        }
    }

    /// The permission rules of `workspace`, as `read` would give them but without waiting
    /// for this engine's other writes: a tool call's check needs every "always" answer
    /// stored before it, not the turn's events queued before it, whose commit (and the
    /// delivery of the frames ahead of them) would put the delivery thread's pace into every
    /// tool call. Read right here when a connection is free (`Store::try_reader`), as
    /// `read_now` does.
    pub async fn rules(&self, workspace: &str) -> Result<Vec<RuleRow>, StoreError> {
        if self.outbox.has_pending_rules() {
            self.outbox.flushed().await;
        }
        match self.store().try_reader() {
            Some(rows) => rows.rules(workspace),
            None => tokio::task::block_in_place(|| self.store().reader().rules(workspace)),
        }
    }

    /// Runs `read` right here when that costs no wait: nothing is pending and a connection
    /// is free (`Store::try_reader`: the writer, else the read connection). `None` means "use `read`". For small, indexed queries answered on
    /// the caller's thread (`session/list`). SQLite itself could still make a WAL reader wait,
    /// but only while a crashed writer's log is recovered, which happens at open.
    pub fn read_now<T>(&self, read: impl FnOnce(&Reader<'_>) -> T) -> Option<T> {
        if self.outbox.has_pending_writes() {
            return None;
        }
        self.store().try_reader().map(|reader| read(&reader))
    }

    /// Resolves once the delivery thread has taken every frame queued before this call: a
    /// long replay paces itself with it, so that what it has queued stays bounded.
    pub async fn delivered(&self) {
        self.outbox.flushed().await;
    }

    /// Stops the outbox thread once it has delivered what is queued.
    pub fn shutdown_outbox(&self) {
        self.outbox.shutdown();
    }

    /// The id the store records this engine's turns under, its lock taken first (once), so
    /// that other processes on the data dir see the turns live for as long as the engine is
    /// (`store/engines.rs`).
    pub fn turn_owner(&self) -> Arc<str> {
        let lease = self.store().lease();
        lease.hold();
        lease.id().clone()
    }

    /// Whether the engine `id`, which recorded a running turn, is gone (this one never is).
    /// Checks a file lock; call it where blocking is allowed.
    pub fn engine_is_gone(&self, id: &str) -> bool {
        self.store().lease().is_gone(id)
    }

    /// What other processes have committed to the store (`Store::foreign_version`): the
    /// same number as at a session's last read means that nothing but this engine changed
    /// it since. Waits for no pending write (this engine's commits do not move it), only for
    /// a commit in progress.
    pub fn foreign_version(&self) -> Result<i64, StoreError> {
        tokio::task::block_in_place(|| self.store().foreign_version())
    }

    /// Releases the database file, and this engine's lock.
    pub fn close_store(&self) {
        if let Some(started) = self.started.get() {
            started.store.close();
        }
    }
}
