//! `EngineContext`: what every part of a running engine shares — the resolved configuration,
//! the store and the outbox, the providers, the live sessions, and the ports the protocol edge
//! implements for the domain (how session events are written and sent, requests to the
//! client). Its fields are private: each use has a method that says what it is for.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use crate::config::{Config, ModelInfo, Resolved};
use crate::io::{ClientAbilities, ClientPort};
use crate::llm::Providers;
use crate::outbox::Outbox;
use crate::permissions::prompt::Approver;
use crate::session::events::EventFormat;
use crate::session::registry::Sessions;
use crate::store::{Reader, Store, StoreError, StoreOp};
use crate::tools::{Limits, ToolDeps};

/// What the protocol edge implements for the domain.
pub struct Ports {
    /// How session events are logged and sent (ACP v1 `session/update`s).
    pub events: Arc<dyn EventFormat>,
    /// Requests to the client (`fs/*`, `terminal/*`).
    pub client: Arc<dyn ClientPort>,
    /// Permission requests to the user.
    pub approver: Arc<dyn Approver>,
}

pub struct EngineContext {
    config: Config,
    /// The config resolved against the environment at start: the default model, the models
    /// users can pick, the endpoints.
    resolved: Resolved,
    /// The tools' bounds, from the config's `tools`.
    tool_limits: Limits,
    store: Arc<Store>,
    outbox: Outbox,
    providers: Providers,
    tool_deps: ToolDeps,
    sessions: Sessions,
    runtime: tokio::runtime::Handle,
    /// What the client advertised in its last `initialize`.
    abilities: RwLock<ClientAbilities>,
    ports: Ports,
    closed: AtomicBool,
}

impl EngineContext {
    pub fn new(
        config: Config,
        resolved: Resolved,
        store: Arc<Store>,
        outbox: Outbox,
        runtime: tokio::runtime::Handle,
        ports: Ports,
    ) -> Self {
        EngineContext {
            providers: Providers::new(&resolved, config.stream_idle_timeout()),
            tool_limits: Limits::from(&config.tools),
            resolved,
            tool_deps: ToolDeps::create(&config),
            config,
            store,
            outbox,
            sessions: Sessions::default(),
            runtime,
            abilities: RwLock::new(ClientAbilities::default()),
            ports,
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

    pub fn providers(&self) -> &Providers {
        &self.providers
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

    pub fn runtime(&self) -> &tokio::runtime::Handle {
        &self.runtime
    }

    pub fn events(&self) -> &dyn EventFormat {
        &*self.ports.events
    }

    pub fn client(&self) -> Arc<dyn ClientPort> {
        self.ports.client.clone()
    }

    pub fn approver(&self) -> &dyn Approver {
        &*self.ports.approver
    }

    pub fn abilities(&self) -> ClientAbilities {
        *self.abilities.read().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_abilities(&self, abilities: ClientAbilities) {
        *self.abilities.write().unwrap_or_else(|p| p.into_inner()) = abilities;
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
        tokio::task::block_in_place(|| read(&self.store.reader()))
    }

    /// Runs `read` right here when that costs no wait: nothing is pending and the read
    /// connection is free. `None` means "use `read`". For small, indexed queries answered on
    /// the caller's thread (`session/list`). SQLite itself could still make a WAL reader wait,
    /// but only while a crashed writer's log is recovered, which happens at open.
    pub fn read_now<T>(&self, read: impl FnOnce(&Reader<'_>) -> T) -> Option<T> {
        if self.outbox.has_pending_writes() {
            return None;
        }
        self.store.try_reader().map(|reader| read(&reader))
    }

    /// Stops the outbox thread once it has delivered what is queued.
    pub fn shutdown_outbox(&self) {
        self.outbox.shutdown();
    }

    /// Releases the database file.
    pub fn close_store(&self) {
        self.store.close();
    }
}
