//! One language server for one workspace root, across its restarts: started on first use,
//! restarted once if it ends, then reported as unavailable.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::LOG_TARGET;
use super::client::Connection;
use super::spec::ServerSpec;

/// How long servers get to start and to answer.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub startup: Duration,
    pub request: Duration,
}

/// Starts a server gets: the first, and one restart.
const MAX_STARTS: u32 = 2;

pub struct Server {
    pub spec: ServerSpec,
    pub root: PathBuf,
    pub timeouts: Timeouts,
    state: tokio::sync::Mutex<State>,
    /// The running connection, for `stop` (which must not wait for a call holding `state`).
    current: Mutex<Option<Arc<Connection>>>,
    stopped: AtomicBool,
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
    pub fn new(spec: ServerSpec, root: PathBuf, timeouts: Timeouts) -> Self {
        Server {
            spec,
            root,
            timeouts,
            state: tokio::sync::Mutex::new(State::Fresh),
            current: Mutex::new(None),
            stopped: AtomicBool::new(false),
        }
    }

    /// The running server, started (or restarted, once) if it is not; the error says why
    /// there is none.
    pub async fn connection(&self) -> Result<Arc<Connection>, String> {
        let mut state = self.state.lock().await;
        let starts = match &*state {
            State::Running { connection, starts } => match connection.ended() {
                None => return Ok(connection.clone()),
                Some(reason) if *starts >= MAX_STARTS => {
                    let reason = format!("it stopped again after a restart: {reason}");
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
        match Connection::start(&self.spec, &self.root, self.timeouts.startup).await {
            Ok(connection) => {
                let connection = Arc::new(connection);
                *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(connection.clone());
                // A stop that came while it started must not leave it running.
                if self.stopped.load(Ordering::Acquire) {
                    connection.stop();
                }
                *state = State::Running {
                    connection: connection.clone(),
                    starts: starts + 1,
                };
                Ok(connection)
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
