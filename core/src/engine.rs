//! `Engine`: the runtime, the inbound path, the outbox thread, shutdown.
//!
//! `send` never blocks: it parses the frame on the caller's thread, answers what can be
//! answered at once, and hands the rest to the engine's tokio runtime. Frames out go through
//! the outbox thread (see `outbox/mod.rs`), except an answer made inside `send` with nothing
//! ahead of it, which the host may take on the caller's thread before `send` returns
//! (`Host::deliver_here`, `outbox/here.rs`).

use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::acp::client::AcpClient;
use crate::acp::updates::V1Log;
use crate::acp::{self, Edge, wire};
use crate::config::{Config, StoreLocation, TerminalSignIn};
use crate::context::{EngineContext, Ports, Started};
use crate::error::EngineError;
use crate::io::LocalIo;
use crate::io::process::{Confinement, Launcher};
use crate::outbox::{Host, Outbox};
use crate::rpc::RpcError;
use crate::rpc::envelope;
use crate::rpc::outgoing::Outgoing;
use crate::store::Store;

pub struct Engine {
    running: Arc<Running>,
}

/// What `close` tears down; shared with the thread that closes an engine dropped on its own
/// delivery thread.
struct Running {
    edge: Arc<Edge>,
    /// What `ready` starts and `close` stops and joins. Held for the whole of either, so a
    /// concurrent second `close` returns only once the first has joined every thread.
    threads: Mutex<Option<Threads>>,
    /// Set by `ready`; before it there is no delivery thread.
    delivery_thread: OnceLock<ThreadId>,
    /// What `ready` opens the store from: resolved (and refused if it cannot be) at
    /// `prepare_with`, where the config's errors belong.
    store_location: StoreLocation,
    /// For `send`'s scope of hand-overs on the caller's thread, and to know when `close` is
    /// called from inside one.
    outbox: Outbox,
}

/// The launcher of every child the engine starts: none sees the provider credentials.
fn launcher() -> Launcher {
    Launcher::new(&crate::config::CREDENTIAL_ENV)
}

/// What a host may plug into an engine besides its frames; the default is none of it.
#[derive(Default)]
pub struct HostPorts {
    /// Confines every child process the engine starts (commands, MCP and language servers):
    /// a sandbox.
    pub confinement: Option<Arc<dyn Confinement>>,
    /// The host's `hearth auth` (the stdio binary has one): the keys the user stored, read
    /// when a turn first needs them and at each `authenticate`, and the program a terminal
    /// runs to sign in.
    pub sign_in: Option<Arc<dyn TerminalSignIn>>,
}

struct Threads {
    runtime: tokio::runtime::Runtime,
    delivery: JoinHandle<()>,
}

/// How long `close` lets cancelled turns answer before it stops the runtime.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

impl Engine {
    /// Opens the store, starts the runtime and the delivery thread (`prepare_with`, then
    /// `ready`). Errors here are final: nothing has been written.
    pub fn start(config: Config, host: Arc<dyn Host>) -> Result<Engine, EngineError> {
        Engine::start_with(config, host, HostPorts::default())
    }

    /// Like `start`, with every child process the engine starts (commands, MCP and language
    /// servers) confined by `policy`: a sandbox.
    pub fn start_confined(
        config: Config,
        host: Arc<dyn Host>,
        policy: Arc<dyn Confinement>,
    ) -> Result<Engine, EngineError> {
        let ports = HostPorts {
            confinement: Some(policy),
            ..HostPorts::default()
        };
        Engine::start_with(config, host, ports)
    }

    /// Like `start`, with the host's own ports plugged in.
    pub fn start_with(
        config: Config,
        host: Arc<dyn Host>,
        host_ports: HostPorts,
    ) -> Result<Engine, EngineError> {
        let engine = Engine::prepare_with(config, host, host_ports)?;
        engine.ready()?;
        Ok(engine)
    }

    /// An engine that answers the client's frames up to its first `initialize` before it
    /// opens its store and starts its runtime and delivery thread: `ready` starts them, and
    /// so does the first frame after `initialize`; nothing before it needs them. For a host
    /// whose client waits on that first answer to go on (`hearth acp`, spawned by an editor),
    /// which calls `ready` right after it. Until then frames reach the host only through
    /// `Host::deliver_here`; one it declines waits for the delivery thread.
    pub fn prepare_with(
        config: Config,
        host: Arc<dyn Host>,
        host_ports: HostPorts,
    ) -> Result<Engine, EngineError> {
        let launcher = match host_ports.confinement {
            Some(policy) => launcher().confined(policy),
            None => launcher(),
        };
        let resolved = config.resolve()?;
        let store_location = config.store_location()?;
        let outbox = Outbox::new(host);
        let catalog = resolved.catalog.clone();
        let outgoing = Arc::new(Outgoing::default());
        let client = Arc::new(AcpClient::new(outgoing.clone(), outbox.clone()));
        let launcher = Arc::new(launcher);
        let ports = Ports {
            log: Arc::new(V1Log::new(catalog.clone())),
            connection: wire::before_initialize(client.clone(), LocalIo::new(launcher.clone())),
            approver: client.clone(),
            sign_in: host_ports.sign_in,
        };
        let ctx = EngineContext::new(config, resolved, outbox.clone(), ports, launcher);
        let edge = Arc::new(Edge::new(Arc::new(ctx), outgoing, client));
        Ok(Engine {
            running: Arc::new(Running {
                edge,
                threads: Mutex::new(None),
                delivery_thread: OnceLock::new(),
                store_location,
                outbox,
            }),
        })
    }

    /// Opens the store, starts the runtime and the delivery thread, which then delivers what
    /// was queued meanwhile. Does nothing if they run already; `Closed` once the engine is
    /// closed. On an error nothing was written or started; each later call, and each frame
    /// that needs them, tries again.
    pub fn ready(&self) -> Result<(), EngineError> {
        self.running.ready()
    }

    /// Hands the engine one frame from the client. Never blocks — but for the start that the
    /// first frame after `initialize` makes on an engine from `prepare_with` that `ready` has
    /// not started, whose error it returns; safe from any thread,
    /// including from inside `Host::deliver` and `Host::deliver_here`. An answer made here
    /// with nothing ahead of it is offered to `Host::deliver_here` before this returns.
    pub fn send(&self, frame: &str) -> Result<(), EngineError> {
        let edge = &self.running.edge;
        if edge.ctx().is_closed() {
            return Err(EngineError::Closed);
        }
        if !edge.ctx().is_started() && edge.is_initialized() {
            self.running.ready()?;
        }
        let _here = self.running.outbox.caller_scope();
        match envelope::parse(frame) {
            Ok(inbound) => acp::dispatch(edge, inbound),
            Err(rejected) if rejected.answer => edge.respond(&rejected.id, Err(rejected.error)),
            Err(_) => {}
        }
        Ok(())
    }

    /// Like `send`, for hosts that hold bytes: invalid UTF-8 is answered with a parse error.
    pub fn send_bytes(&self, frame: &[u8]) -> Result<(), EngineError> {
        match std::str::from_utf8(frame) {
            Ok(text) => self.send(text),
            Err(e) if !self.running.edge.ctx().is_closed() => {
                let _here = self.running.outbox.caller_scope();
                let error = RpcError::parse_error(format!("the frame is not valid UTF-8: {e}"));
                self.running.edge.respond(&Value::Null, Err(error));
                Ok(())
            }
            Err(_) => Err(EngineError::Closed),
        }
    }

    /// Cancels every turn, answers what is in flight, flushes and closes the store and joins
    /// the engine's threads; when it returns, `Host::deliver` will not run again. Idempotent
    /// and safe from several threads at once. Called from inside `Host::deliver` or
    /// `Host::deliver_here` it does nothing and returns `CloseFromDeliver`: it would wait for
    /// itself.
    pub fn close(&self) -> Result<(), EngineError> {
        self.running.close()
    }
}

impl Running {
    /// Whether this thread is inside one of the host's callbacks, where closing would wait
    /// for itself.
    fn inside_host(&self) -> bool {
        self.is_delivery_thread() || self.outbox.is_handing_here()
    }

    fn is_delivery_thread(&self) -> bool {
        self.delivery_thread.get() == Some(&std::thread::current().id())
    }

    fn ready(&self) -> Result<(), EngineError> {
        let ctx = self.edge.ctx();
        let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        if ctx.is_closed() {
            return Err(EngineError::Closed);
        }
        if ctx.is_started() {
            return Ok(());
        }
        let store = Store::open(&self.store_location).map_err(|e| EngineError::Store(e.0))?;
        let store = Arc::new(store);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(ctx.config().worker_threads())
            .thread_name("hearth-worker")
            .enable_all()
            .build()
            .map_err(|e| EngineError::Start(format!("cannot start the runtime: {e}")))?;
        let (delivery, delivery_thread) = self
            .outbox
            .start(store.clone())
            .map_err(|e| EngineError::Start(format!("cannot start the delivery thread: {e}")))?;
        let _ = self.delivery_thread.set(delivery_thread);
        let handle = runtime.handle().clone();
        ctx.start(Started {
            store,
            runtime: handle,
        });
        *threads = Some(Threads { runtime, delivery });
        Ok(())
    }

    fn close(&self) -> Result<(), EngineError> {
        if self.inside_host() {
            return Err(EngineError::CloseFromDeliver);
        }
        let (edge, ctx) = (&self.edge, self.edge.ctx());
        ctx.mark_closed();
        let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        let Some(Threads { runtime, delivery }) = threads.take() else {
            return Ok(());
        };
        ctx.sessions().cancel_all();
        edge.cancel_all();
        let deadline = Instant::now() + CLOSE_GRACE;
        while !edge.is_idle() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        ctx.sessions().shutdown_all();
        // Servers the sessions let go are stopping already; this stops any left and waits.
        ctx.tool_deps().lsp.close();
        runtime.shutdown_timeout(Duration::from_millis(500));
        ctx.shutdown_outbox();
        let _ = delivery.join();
        // Release the database file now, not whenever the host drops its handle.
        ctx.close_store();
        Ok(())
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if self.running.is_delivery_thread() {
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
