//! `Engine`: the runtime, the inbound path, the outbox thread, shutdown.
//!
//! `send` never blocks: it parses the frame on the caller's thread, answers what can be
//! answered at once, and hands the rest to the engine's tokio runtime. Every frame out goes
//! through the outbox thread (see `outbox.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::{JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::config::{Config, ModelInfo};
pub use crate::error::EngineError;
use crate::io::ClientAbilities;
use crate::llm::Providers;
use crate::outbox::{Host, Outbox};
use crate::rpc::envelope;
use crate::rpc::inflight::Inflight;
use crate::rpc::outgoing::Outgoing;
use crate::rpc::{RequestId, RpcError};
use crate::session::registry::Sessions;
use crate::store::Store;
use crate::tools::Registry;

/// What the client told us in `initialize`.
#[derive(Debug, Default, Clone)]
pub struct ClientInfo {
    pub initialized: bool,
    pub abilities: ClientAbilities,
}

/// Everything handlers share. Lives as long as any task holds it.
pub struct Shared {
    pub config: Config,
    /// The models users can pick, with defaults resolved (see `Config::catalog`).
    pub catalog: Vec<ModelInfo>,
    pub store: Arc<Store>,
    pub outbox: Outbox,
    pub providers: Providers,
    pub tools: Registry,
    pub outgoing: Outgoing,
    pub inflight: Inflight,
    pub sessions: Sessions,
    pub client: RwLock<ClientInfo>,
    pub runtime: tokio::runtime::Handle,
    closed: AtomicBool,
}

impl Shared {
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub fn is_initialized(&self) -> bool {
        self.client.read().map(|c| c.initialized).unwrap_or(false)
    }

    /// Queues the answer to a client request.
    pub fn respond(&self, id: &RequestId, outcome: Result<Value, RpcError>) {
        self.outbox.frame(envelope::response_frame(id, &outcome));
    }
}

pub struct Engine {
    running: Arc<Running>,
}

/// What `close` tears down; shared with the thread that closes an engine dropped on its own
/// delivery thread.
struct Running {
    shared: Arc<Shared>,
    /// Held for the whole of `close`, so a concurrent second `close` returns only once the
    /// first has joined every thread.
    threads: Mutex<Option<Threads>>,
    delivery_thread: ThreadId,
}

struct Threads {
    runtime: tokio::runtime::Runtime,
    delivery: JoinHandle<()>,
}

/// How long `close` lets cancelled turns answer before it stops the runtime.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

impl Engine {
    /// Opens the store, starts the runtime and the delivery thread. Errors here are final:
    /// nothing has been written.
    pub fn start(config: Config, host: Arc<dyn Host>) -> Result<Engine, EngineError> {
        let location = config.store_location()?;
        let store = Arc::new(Store::open(&location).map_err(|e| EngineError::Store(e.0))?);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(config.worker_threads())
            .thread_name("hearth-worker")
            .enable_all()
            .build()
            .map_err(|e| EngineError::Start(format!("cannot start the runtime: {e}")))?;
        let (outbox, delivery, delivery_thread) = Outbox::start(store.clone(), host)
            .map_err(|e| EngineError::Start(format!("cannot start the delivery thread: {e}")))?;
        let providers = Providers::new(&config);
        let shared = Arc::new(Shared {
            catalog: config.catalog(),
            config,
            store,
            outbox,
            providers,
            tools: Registry::builtin(),
            outgoing: Outgoing::default(),
            inflight: Inflight::default(),
            sessions: Sessions::default(),
            client: RwLock::new(ClientInfo::default()),
            runtime: runtime.handle().clone(),
            closed: AtomicBool::new(false),
        });
        let threads = Threads { runtime, delivery };
        Ok(Engine {
            running: Arc::new(Running {
                shared,
                threads: Mutex::new(Some(threads)),
                delivery_thread,
            }),
        })
    }

    /// Hands the engine one frame from the client. Never blocks; safe from any thread,
    /// including from inside `Host::deliver`.
    pub fn send(&self, frame: &str) -> Result<(), EngineError> {
        let shared = &self.running.shared;
        if shared.is_closed() {
            return Err(EngineError::Closed);
        }
        match envelope::parse(frame) {
            Ok(inbound) => crate::acp::dispatch(shared, inbound),
            Err(rejected) if rejected.answer => shared.respond(&rejected.id, Err(rejected.error)),
            Err(_) => {}
        }
        Ok(())
    }

    /// Like `send`, for hosts that hold bytes: invalid UTF-8 is answered with a parse error.
    pub fn send_bytes(&self, frame: &[u8]) -> Result<(), EngineError> {
        match std::str::from_utf8(frame) {
            Ok(text) => self.send(text),
            Err(e) if !self.running.shared.is_closed() => {
                let error = RpcError::parse_error(format!("the frame is not valid UTF-8: {e}"));
                self.running.shared.respond(&Value::Null, Err(error));
                Ok(())
            }
            Err(_) => Err(EngineError::Closed),
        }
    }

    /// Cancels every turn, answers what is in flight, flushes and closes the store and joins
    /// the engine's threads; when it returns, `Host::deliver` will not run again. Idempotent
    /// and safe from several threads at once. Must not be called from inside `Host::deliver`.
    pub fn close(&self) -> Result<(), EngineError> {
        self.running.close()
    }
}

impl Running {
    fn close(&self) -> Result<(), EngineError> {
        if std::thread::current().id() == self.delivery_thread {
            return Err(EngineError::CloseFromDeliver);
        }
        let shared = &self.shared;
        shared.closed.store(true, Ordering::Release);
        let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        let Some(Threads { runtime, delivery }) = threads.take() else {
            return Ok(());
        };
        shared.sessions.cancel_all();
        shared.inflight.cancel_all();
        shared.outgoing.cancel_all();
        let deadline = Instant::now() + CLOSE_GRACE;
        while !shared.inflight.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        runtime.shutdown_timeout(Duration::from_millis(500));
        shared.outbox.shutdown();
        let _ = delivery.join();
        // Release the database file now, not whenever the host drops its handle.
        shared.store.close();
        Ok(())
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if std::thread::current().id() == self.running.delivery_thread {
            // Dropped inside `deliver`: closing waits for this very thread, so hand the close
            // to another one; turns in flight still get their answers.
            let running = self.running.clone();
            let spawned = std::thread::Builder::new()
                .name("hearth-close".into())
                .spawn(move || running.close());
            if let Err(e) = spawned {
                tracing::error!(error = %e, "cannot start a thread to close the engine");
            }
        } else if let Err(e) = self.running.close() {
            tracing::error!(error = %e, "closing the engine on drop failed");
        }
    }
}
