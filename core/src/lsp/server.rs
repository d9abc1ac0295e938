//! One language server for one workspace root, across its restarts: started on first use,
//! restarted once if it ends, then reported as unavailable.
//!
//! A server is spawned through the launcher as the leader of a process group (`tsc` is a Node
//! wrapper around a Go binary) and `initialize`d within `lsp.startupTimeoutSecs`, with its root
//! as the one workspace folder and Hearth's pid as `processId`. When its output ends (it
//! crashed, or was killed), the next call starts it again — once; after that, and after a
//! failed start, calls answer "unavailable: …" with the reason (a default that cannot start
//! names its install command: missing, or an old `tsc` without `--lsp`, whose stdout is not
//! LSP). A call waiting for a start — its own or another session's — gives up when its turn is
//! cancelled; an abandoned start stops its process and counts for nothing.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::LOG_TARGET;
use super::connection::Connection;
use super::spec::ServerSpec;
use crate::io::process::Launcher;
use crate::sandbox::Setup;

/// How long servers get to start and to answer.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub startup: Duration,
    pub request: Duration,
}

/// Starts a server gets: the first, and one restart.
const MAX_STARTS: u32 = 2;

/// Why a call that was cancelled while its server started has no server.
const CANCELLED: &str = "cancelled";

/// How the reason of a server that ended after its restart begins.
pub const CRASHED_AGAIN: &str = "it stopped again after a restart";

pub struct Server {
    pub spec: ServerSpec,
    pub root: PathBuf,
    pub timeouts: Timeouts,
    launcher: Arc<Launcher>,
    /// The sandbox it runs in; `None`: unconfined (turned off for language servers).
    sandbox: Option<Arc<Setup>>,
    state: tokio::sync::Mutex<State>,
    /// The running connection, for `stop` (which must not wait for a call holding `state`).
    current: Mutex<Option<Arc<Connection>>>,
    stopped: AtomicBool,
}

/// A running server, and whether it is started again should it end.
pub struct RunningServer {
    pub connection: Arc<Connection>,
    pub may_restart: bool,
}

enum State {
    Fresh,
    Running {
        connection: Arc<Connection>,
        starts: u32,
    },
    /// Why it cannot be used: it could not start, or ended after its restart.
    Unavailable(String),
}

impl Server {
    pub fn new(
        spec: ServerSpec,
        root: PathBuf,
        timeouts: Timeouts,
        launcher: Arc<Launcher>,
        sandbox: Option<Arc<Setup>>,
    ) -> Self {
        Server {
            spec,
            root,
            timeouts,
            launcher,
            sandbox,
            state: tokio::sync::Mutex::new(State::Fresh),
            current: Mutex::new(None),
            stopped: AtomicBool::new(false),
        }
    }

    /// The running server, started (or restarted, once) if it is not; the error says why
    /// there is none. A caller waiting for another's start, or starting it, stops waiting when
    /// `cancel` fires; an abandoned start stops its process and counts for nothing.
    pub async fn connection(&self, cancel: &CancellationToken) -> Result<RunningServer, String> {
        let mut state = tokio::select! {
            state = self.state.lock() => state,
            _ = cancel.cancelled() => return Err(CANCELLED.into()),
        };
        let starts = match &*state {
            State::Running { connection, starts } => match connection.ended() {
                None => return Ok(running(connection, *starts)),
                Some(reason) if *starts >= MAX_STARTS => {
                    let reason = format!("{CRASHED_AGAIN}: {reason}");
                    *state = State::Unavailable(reason.clone());
                    return Err(reason);
                }
                Some(reason) => {
                    tracing::warn!(target: LOG_TARGET, server = %self.spec.name, "restarting: {reason}");
                    *starts
                }
            },
            State::Fresh => 0,
            State::Unavailable(reason) => return Err(reason.clone()),
        };
        if self.stopped.load(Ordering::Acquire) {
            return Err("it was shut down".into());
        }
        // Published before the handshake, so that a stop (the last session going, the engine
        // closing) reaches a server still starting, and `wait` waits for it.
        let connection = match Connection::spawn(
            &self.launcher,
            &self.spec,
            &self.root,
            self.sandbox.as_deref(),
        ) {
            Ok(connection) => Arc::new(connection),
            Err(reason) => {
                *state = State::Unavailable(reason.clone());
                return Err(reason);
            }
        };
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(connection.clone());
        if self.stopped.load(Ordering::Acquire) {
            connection.stop();
        }
        let initialized = connection
            .initialize(&self.spec, &self.root, self.timeouts.startup, cancel)
            .await;
        if cancel.is_cancelled() {
            // An abandoned start counts for nothing: the next call starts afresh.
            connection.stop();
            return Err(CANCELLED.into());
        }
        match initialized {
            Ok(()) => {
                let started = running(&connection, starts + 1);
                *state = State::Running {
                    connection,
                    starts: starts + 1,
                };
                Ok(started)
            }
            Err(reason) => {
                *state = State::Unavailable(reason.clone());
                Err(reason)
            }
        }
    }

    /// Stops the server's processes; later calls find it unavailable.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        if let Some(connection) = &*self.current.lock().unwrap_or_else(|p| p.into_inner()) {
            connection.stop();
        }
    }

    /// Waits until a stopped server's processes are gone.
    pub fn wait(&self) {
        if let Some(connection) = &*self.current.lock().unwrap_or_else(|p| p.into_inner()) {
            connection.wait();
        }
    }

    /// Whether a stopped server's processes are gone (or it never started).
    pub fn settled(&self) -> bool {
        let current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        current
            .as_ref()
            .is_none_or(|connection| connection.settled())
    }
}

fn running(connection: &Arc<Connection>, starts: u32) -> RunningServer {
    RunningServer {
        connection: connection.clone(),
        may_restart: starts < MAX_STARTS,
    }
}
