//! One running language server: its process's life (started by the launcher, stopped the LSP
//! way then by signals, waited for), the `initialize` handshake, and the tasks that write to
//! it and read from it. The exchange (`exchange.rs`), the open documents (`documents.rs`),
//! the pushed diagnostics (`pushed.rs`) and the answers to its own requests (`requests.rs`)
//! each have a file of their own.
//!
//! Stopping a server that finished its handshake sends LSP's `shutdown` and `exit` and gives it
//! a second to leave (pyright exits 0; tsc exits by itself too); then, and at once for a server
//! that never finished starting or already ended, SIGTERM goes to the group, SIGKILL after
//! another second (`Group::stop_after`). A `Connection` dropped for any reason (a restart
//! replacing it, an abandoned start, the engine's runtime going down) stops its group, and so
//! does the end of its output (a crashed leader's children go too).
//!
//! Tests: `tools/lsp/tests.rs` (against `tests/lsp/fake_server.py`), `core/tests/lsp.rs` and
//! `core/tests/lsp_processes.rs` (the real servers).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::LOG_TARGET;
use super::documents::Documents;
use super::exchange::{CallError, Exchange, Reply};
use super::pushed::{Published, Pushed};
use super::readiness::Readiness;
use super::spec::ServerSpec;
use super::{requests, transport};
use crate::io::process::{
    ChildKind, Group, LastLine, Launcher, ServerSandbox, Spawned, exit_reason, exit_status,
    start_server,
};
use crate::sandbox::Setup;

/// How long a server asked to exit gets to do so before it is signalled.
const POLITE_EXIT: Duration = Duration::from_secs(1);

pub struct Connection {
    name: String,
    exchange: Arc<Exchange>,
    pushed: Arc<Pushed>,
    readiness: Arc<Readiness>,
    group: Arc<Group>,
    /// Whether `initialize` succeeded: only then is the server asked to shut down.
    initialized: AtomicBool,
    /// False once the server said it has no `textDocument/diagnostic`: wait for pushes then.
    pulls: AtomicBool,
    documents: Documents,
    /// Held from a document's sync until the answer about it: another session syncing other
    /// content for the same file in between would make the answer describe that content.
    turn: Arc<tokio::sync::Mutex<()>>,
    /// The sandbox it runs in (its temp dir goes with the connection), and the backend.
    sandbox: Option<(ServerSandbox, String)>,
}

impl Drop for Connection {
    /// A connection let go — replaced by a restart, abandoned mid-start, dropped at engine
    /// close — takes its process group with it (a no-op when already stopped).
    fn drop(&mut self) {
        self.group.stop();
    }
}

impl Connection {
    /// Starts `spec`'s server in `root`, confined by `sandbox` when given (`root` writable
    /// as its mode says): its process and the tasks that talk to it. The handshake is
    /// `initialize`'s; until then the server must not be used.
    pub fn spawn(
        launcher: &Launcher,
        spec: &ServerSpec,
        root: &Path,
        sandbox: Option<&Setup>,
    ) -> Result<Self, String> {
        let mut launch = launcher.launch(
            ChildKind::LanguageServer,
            &spec.command,
            &spec.args,
            root,
            &[],
        );
        let sandbox = sandbox
            .map(|setup| ServerSandbox::new(setup, &[root], "lsp"))
            .transpose()?;
        if let Some(sandbox) = &sandbox {
            sandbox.apply(&mut launch);
        }
        let Spawned {
            child,
            stdin,
            stdout,
            group,
            stderr,
            sandbox: backend,
        } = start_server(launcher, &spec.name, launch, log_stderr)?;
        let (outgoing, queue) = mpsc::unbounded_channel();
        tokio::spawn(write_all(stdin, queue));
        let exchange = Arc::new(Exchange::new(outgoing));
        let pushed = Arc::new(Pushed::default());
        let readiness = Arc::new(Readiness::default());
        let reader = Reader {
            exchange: exchange.clone(),
            pushed: pushed.clone(),
            readiness: readiness.clone(),
            group: group.clone(),
            folders: requests::folders(root),
        };
        tokio::spawn(reader.run(stdout, child, stderr));
        Ok(Connection {
            name: spec.name.clone(),
            exchange,
            pushed,
            readiness,
            group,
            initialized: AtomicBool::new(false),
            pulls: AtomicBool::new(true),
            documents: Documents::default(),
            turn: Arc::new(tokio::sync::Mutex::new(())),
            sandbox: sandbox.zip(backend),
        })
    }

    /// The `initialize` handshake, within `startup` or until `cancel`; the error says why it
    /// failed, in words for the model, and the server is stopped then.
    pub async fn initialize(
        &self,
        spec: &ServerSpec,
        root: &Path,
        startup: Duration,
        cancel: &CancellationToken,
    ) -> Result<(), String> {
        let params = initialize_params(root, spec.initialization_options.clone());
        match self.request("initialize", params, startup, cancel).await {
            Ok(_) => {
                self.exchange.notify("initialized", json!({}));
                self.initialized.store(true, Ordering::Release);
                Ok(())
            }
            Err(error) => {
                self.stop();
                Err(match error {
                    CallError::Timeout(limit) => format!(
                        "it did not finish starting within {} s (`lsp.startupTimeoutSecs`)",
                        limit.as_secs()
                    ),
                    CallError::Ended(reason) => reason,
                    other => format!("it refused to initialize: {other}"),
                } + &self.sandbox_note(spec))
            }
        }
    }

    /// What a failed start adds when the server ran confined: the sandbox may be why, and how
    /// to run it without.
    fn sandbox_note(&self, spec: &ServerSpec) -> String {
        let Some((sandbox, backend)) = &self.sandbox else {
            return String::new();
        };
        let way_out = format!(
            "`lsp.servers.{}.sandbox: false` or `sandbox.languageServers: false`",
            spec.name
        );
        sandbox.failure_note(backend, &way_out)
    }

    /// The right to sync a document and ask about it before another caller does.
    pub async fn take_turn(&self) -> tokio::sync::OwnedMutexGuard<()> {
        self.turn.clone().lock_owned().await
    }

    /// Why the connection ended, if it has (the process exited, or wrote what is not LSP).
    pub fn ended(&self) -> Option<String> {
        self.exchange.ended()
    }

    /// Stops the server: one that finished its handshake and still runs is asked to
    /// (`shutdown`, then `exit`) and given `POLITE_EXIT` to leave; then, or at once for any
    /// other, its process group gets SIGTERM, and SIGKILL after a grace period.
    pub fn stop(&self) {
        if !self.initialized.load(Ordering::Acquire) || self.ended().is_some() {
            self.group.stop();
            return;
        }
        // Not waiting for `shutdown`'s answer: the server handles the two in order. Neither
        // takes parameters.
        let id = self.exchange.next_id();
        self.exchange
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "shutdown"}));
        self.exchange
            .send(&json!({"jsonrpc": "2.0", "method": "exit"}));
        self.group.stop_after(POLITE_EXIT);
    }

    /// Waits until the stopped group is gone (about a second at most).
    pub fn wait(&self) {
        self.group.wait();
    }

    /// Whether nothing of a stop is left to wait for.
    pub fn settled(&self) -> bool {
        self.group.settled()
    }

    /// Sends a request and waits for its answer, at most `timeout`, or until `cancel`.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Reply {
        self.exchange.request(method, params, timeout, cancel).await
    }

    /// Makes the server's copy of `uri` read `text` (see `Documents::sync`).
    pub async fn sync(&self, uri: &str, language_id: &str, text: &str) -> (i32, u64) {
        self.documents
            .sync(&self.exchange, &self.pushed, uri, language_id, text)
            .await
    }

    /// The documents open in the server, with their content.
    pub async fn documents(&self) -> Vec<(String, String)> {
        self.documents.all().await
    }

    /// Whether to ask for diagnostics (`textDocument/diagnostic`) rather than wait for pushes.
    pub fn pulls(&self) -> bool {
        self.pulls.load(Ordering::Acquire)
    }

    pub fn stop_pulling(&self) {
        tracing::info!(target: LOG_TARGET, server = %self.name, "no pull diagnostics; waiting for pushes");
        self.pulls.store(false, Ordering::Release);
    }

    /// Whether the server last said it is still loading its project.
    pub fn busy(&self) -> bool {
        self.readiness.busy()
    }

    /// Waits while the server says it is loading its project (see `readiness.rs`).
    pub async fn ready(
        &self,
        deadline: (tokio::time::Instant, Duration),
        cancel: &CancellationToken,
    ) -> Result<(), CallError> {
        self.readiness.wait(&self.exchange, deadline, cancel).await
    }

    /// Every document the server pushed diagnostics for.
    pub fn pushed(&self) -> HashMap<String, Published> {
        self.pushed.all()
    }

    /// Waits until the server pushes diagnostics for `version` of `uri` (or, from a server
    /// that leaves versions out, any push after the `pushes`th).
    pub async fn pushed_for(
        &self,
        uri: &str,
        synced: (i32, u64),
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Reply {
        self.pushed
            .wait_for(&self.exchange, uri, synced, timeout, cancel)
            .await
    }
}

/// A server's stderr line, to the LSP log target.
fn log_stderr(server: &str, line: &str) {
    tracing::info!(target: LOG_TARGET, server = %server, "{line}");
}

/// Writes queued frames to the server's stdin until the queue or the pipe closes.
async fn write_all(mut stdin: ChildStdin, mut queue: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(frame) = queue.recv().await {
        if stdin.write_all(&frame).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
}

/// The task reading the server's stdout: answers, its requests, its notifications.
struct Reader {
    exchange: Arc<Exchange>,
    pushed: Arc<Pushed>,
    readiness: Arc<Readiness>,
    group: Arc<Group>,
    folders: Value,
}

impl Reader {
    async fn run(self, stdout: ChildStdout, mut child: Child, stderr: LastLine) {
        let mut stdout = BufReader::new(stdout);
        let broken = loop {
            match transport::read(&mut stdout).await {
                Ok(Some(message)) => self.dispatch(message),
                Ok(None) => break None,
                Err(not_lsp) => break Some(not_lsp),
            }
        };
        let reason = match broken {
            // Framing cannot be found again once lost: the server is no use any more.
            Some(not_lsp) => not_lsp,
            None => exit_reason(exit_status(&mut child).await, &stderr).await,
        };
        // What is left of the group (a wrapper's child, a stuck leader) goes too.
        self.group.stop();
        tracing::warn!(target: LOG_TARGET, "language server ended: {reason}");
        self.exchange.end(reason);
        self.pushed.ended();
        self.readiness.ended();
    }

    fn dispatch(&self, message: Value) {
        let method = message.get("method").and_then(Value::as_str);
        match (method, message.get("id")) {
            (Some(method), Some(id)) => {
                let params = message.get("params");
                let reply = requests::answer(id, method, params, &self.folders);
                self.exchange.send(&reply);
            }
            (Some("textDocument/publishDiagnostics"), None) => {
                if let Some(params) = message.get("params") {
                    self.pushed.record(params);
                }
            }
            (Some("experimental/serverStatus"), None) => {
                if let Some(params) = message.get("params") {
                    self.readiness.record(params);
                }
            }
            (Some(_), None) => {}
            (None, Some(id)) => self.exchange.resolve(id, &message),
            (None, None) => {}
        }
    }
}

/// What Hearth tells a server it can do: full-text sync, pull and pushed diagnostics,
/// definitions (links too) and references, in UTF-16 positions only; and that it listens to
/// rust-analyzer's readiness.
fn initialize_params(root: &Path, options: Option<Value>) -> Value {
    json!({
        "initializationOptions": options,
        // The server exits when Hearth's process does, even if Hearth could not stop it.
        "processId": std::process::id(),
        "clientInfo": {"name": "hearth", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": super::uri(root),
        "workspaceFolders": requests::folders(root),
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "textDocument": {
                "synchronization": {"dynamicRegistration": false, "didSave": false},
                "publishDiagnostics": {"versionSupport": true},
                "diagnostic": {"dynamicRegistration": true},
                "definition": {"linkSupport": true},
                "references": {}
            },
            "workspace": {"configuration": true, "workspaceFolders": true},
            "window": {"workDoneProgress": true},
            // rust-analyzer's `experimental/serverStatus` (`readiness.rs`).
            "experimental": {"serverStatusNotification": true}
        }
    })
}
