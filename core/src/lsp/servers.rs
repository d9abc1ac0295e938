//! The engine's language servers: one per configured server and workspace root, shared by
//! every session on that root, counted by the sessions using it, and stopped when the last
//! one lets it go or the engine closes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::server::{Server, Timeouts};
use super::spec::{self, ServerSpec};
use crate::config::Config;
use crate::io::process::Launcher;
use crate::sandbox::Setup;

/// A server's identity: its config name and its root.
pub type Key = (String, PathBuf);

pub struct Servers {
    specs: Vec<ServerSpec>,
    timeouts: Timeouts,
    launcher: Arc<Launcher>,
    /// The sandbox of the servers (the engine's, as `run_command`'s).
    sandbox: Arc<Setup>,
    running: Mutex<HashMap<Key, Shared>>,
    /// Servers let go whose processes may still be ending, for `close` to wait for.
    stopping: Mutex<Vec<Arc<Server>>>,
    closed: AtomicBool,
}

/// A server and how many sessions hold it.
struct Shared {
    server: Arc<Server>,
    users: usize,
}

impl Servers {
    /// The servers `config` names, started by `launcher`, confined by `sandbox` unless
    /// `sandbox.languageServers` or the server's own `sandbox` says otherwise.
    pub fn new(config: &Config, launcher: Arc<Launcher>, sandbox: Arc<Setup>) -> Self {
        Servers {
            specs: spec::servers(&config.lsp),
            timeouts: Timeouts {
                startup: config.lsp_startup_timeout(),
                request: config.lsp_timeout(),
            },
            launcher,
            sandbox,
            running: Mutex::new(HashMap::new()),
            stopping: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
        }
    }

    /// The server configured for `path`'s extension.
    pub fn spec_for(&self, path: &Path) -> Option<&ServerSpec> {
        spec::for_path(&self.specs, path)
    }

    /// The server `spec` on `root`, made if no session holds it yet, counted as held once
    /// more. `None` once the engine is closing.
    pub fn acquire(&self, spec: &ServerSpec, root: &Path) -> Option<Arc<Server>> {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        let key = (spec.name.clone(), root.to_owned());
        let shared = running.entry(key).or_insert_with(|| Shared {
            server: Arc::new(Server::new(
                spec.clone(),
                root.to_owned(),
                self.timeouts,
                self.launcher.clone(),
                self.sandbox_of(spec),
            )),
            users: 0,
        });
        shared.users += 1;
        Some(shared.server.clone())
    }

    /// The sandbox `spec`'s server runs in, if it runs in one.
    fn sandbox_of(&self, spec: &ServerSpec) -> Option<Arc<Setup>> {
        let wanted = spec
            .sandbox
            .unwrap_or(self.sandbox.settings.confines_language_servers());
        wanted.then(|| self.sandbox.clone())
    }

    /// One holder lets `server` go; the last one stops it.
    pub fn release(&self, server: &Arc<Server>) {
        let key = (server.spec.name.clone(), server.root.clone());
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        let Some(shared) = running.get_mut(&key) else {
            return;
        };
        if !Arc::ptr_eq(&shared.server, server) {
            return;
        }
        shared.users -= 1;
        if shared.users == 0 {
            running.remove(&key);
            drop(running);
            server.stop();
            let mut stopping = self.stopping.lock().unwrap_or_else(|p| p.into_inner());
            stopping.retain(|server| !server.settled());
            stopping.push(server.clone());
        }
    }

    /// Stops every server and waits until their processes are gone: the engine is closing.
    pub fn close(&self) {
        let running: Vec<Arc<Server>> = {
            let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
            self.closed.store(true, Ordering::Release);
            running.drain().map(|(_, shared)| shared.server).collect()
        };
        for server in &running {
            server.stop();
        }
        let stopping =
            std::mem::take(&mut *self.stopping.lock().unwrap_or_else(|p| p.into_inner()));
        for server in running.iter().chain(&stopping) {
            server.wait();
        }
    }

    /// How many servers are held (for tests of sharing).
    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}
