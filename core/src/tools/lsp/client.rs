//! One running language server: its process, the JSON-RPC exchange with it, the documents it
//! has open and the diagnostics it pushed. Requests the server makes of Hearth are answered
//! here, on the reader task, so a server waiting for its configuration never stalls a call.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::LOG_TARGET;
use super::spec::ServerSpec;
use super::transport;
use crate::io::process::{
    ChildKind, Group, LastLine, Launcher, Spawned, exit_reason, exit_status, start_server,
};

/// JSON-RPC's "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;

/// Why a request got no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// No answer within the timeout (the request was cancelled with the server).
    Timeout(Duration),
    /// The server's process ended, or its output stopped being LSP.
    Ended(String),
    /// The server answered with an error.
    Failed { code: i64, message: String },
    /// The turn was cancelled.
    Cancelled,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Timeout(limit) => write!(
                f,
                "the server did not answer within {} s (`lsp.timeoutSecs`)",
                limit.as_secs()
            ),
            CallError::Ended(reason) => write!(f, "the server stopped: {reason}"),
            CallError::Failed { code, message } => {
                write!(f, "the server answered {code}: {message}")
            }
            CallError::Cancelled => f.write_str("cancelled"),
        }
    }
}

type Reply = Result<Value, CallError>;

/// Diagnostics a server pushed for one document.
#[derive(Clone)]
pub struct Published {
    pub version: Option<i64>,
    /// The connection's count of pushes when this one arrived.
    pub seq: u64,
    pub diagnostics: Value,
}

/// What the reader task and the callers share.
#[derive(Default)]
struct Shared {
    exchange: Mutex<Exchange>,
    pushed: Mutex<HashMap<String, Published>>,
    pushes: AtomicU64,
    /// Woken by each push and by the end of the connection.
    changed: Notify,
}

#[derive(Default)]
struct Exchange {
    pending: HashMap<u64, oneshot::Sender<Reply>>,
    /// Why the connection ended, once it has.
    ended: Option<String>,
}

impl Shared {
    fn end(&self, reason: String) {
        let pending = {
            let mut exchange = self.exchange.lock().unwrap_or_else(|p| p.into_inner());
            exchange.ended.get_or_insert(reason.clone());
            std::mem::take(&mut exchange.pending)
        };
        for (_, waiter) in pending {
            let _ = waiter.send(Err(CallError::Ended(reason.clone())));
        }
        self.changed.notify_waiters();
    }

    fn ended(&self) -> Option<String> {
        let exchange = self.exchange.lock().unwrap_or_else(|p| p.into_inner());
        exchange.ended.clone()
    }
}

/// How long a server asked to exit gets to do so before it is signalled.
const POLITE_EXIT: Duration = Duration::from_secs(1);

/// Documents kept open in a server, at most: a server analyses every open document again on
/// each change (pyright does), so a long session must not leave hundreds open. The least
/// recently used is closed first; the server then reads it from disk, if it needs it.
const MAX_OPEN_DOCUMENTS: usize = 32;

/// A document as the server has it.
struct Document {
    version: i32,
    text: String,
    /// When it was last synced, in `Documents::clock` ticks.
    used: u64,
}

#[derive(Default)]
struct Documents {
    open: HashMap<String, Document>,
    clock: u64,
}

pub struct Connection {
    name: String,
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
    shared: Arc<Shared>,
    next_id: AtomicU64,
    group: Arc<Group>,
    /// Whether `initialize` succeeded: only then is the server asked to shut down.
    initialized: AtomicBool,
    /// False once the server said it has no `textDocument/diagnostic`: wait for pushes then.
    pulls: AtomicBool,
    documents: tokio::sync::Mutex<Documents>,
    /// Held from a document's sync until the answer about it: another session syncing other
    /// content for the same file in between would make the answer describe that content.
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl Drop for Connection {
    /// A connection let go — replaced by a restart, abandoned mid-start, dropped at engine
    /// close — takes its process group with it (a no-op when already stopped).
    fn drop(&mut self) {
        self.group.stop();
    }
}

impl Connection {
    /// Starts `spec`'s server in `root`: its process and the tasks that talk to it. The
    /// handshake is `initialize`'s; until then the server must not be used.
    pub fn spawn(launcher: &Launcher, spec: &ServerSpec, root: &Path) -> Result<Self, String> {
        let launch = launcher.launch(
            ChildKind::LanguageServer,
            &spec.command,
            &spec.args,
            root,
            &[],
        );
        let Spawned {
            child,
            stdin,
            stdout,
            group,
            stderr,
        } = start_server(launcher, &spec.name, launch, log_stderr)?;
        let shared = Arc::new(Shared::default());
        let (outgoing, queue) = mpsc::unbounded_channel();
        tokio::spawn(write_all(stdin, queue));
        let reader = Reader {
            shared: shared.clone(),
            outgoing: outgoing.clone(),
            group: group.clone(),
            folders: folders(root),
        };
        tokio::spawn(reader.run(stdout, child, stderr));
        Ok(Connection {
            name: spec.name.clone(),
            outgoing,
            shared,
            next_id: AtomicU64::new(1),
            group,
            initialized: AtomicBool::new(false),
            pulls: AtomicBool::new(true),
            documents: tokio::sync::Mutex::new(Documents::default()),
            turn: Arc::new(tokio::sync::Mutex::new(())),
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
                self.notify("initialized", json!({}));
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
                })
            }
        }
    }

    /// The right to sync a document and ask about it before another caller does.
    pub async fn take_turn(&self) -> tokio::sync::OwnedMutexGuard<()> {
        self.turn.clone().lock_owned().await
    }

    /// Why the connection ended, if it has (the process exited, or wrote what is not LSP).
    pub fn ended(&self) -> Option<String> {
        self.shared.ended()
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
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "shutdown"}));
        self.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
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
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (waiter, answer) = oneshot::channel();
        {
            let mut exchange = self
                .shared
                .exchange
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if let Some(reason) = &exchange.ended {
                return Err(CallError::Ended(reason.clone()));
            }
            exchange.pending.insert(id, waiter);
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let abandoned = tokio::select! {
            reply = answer => return reply.unwrap_or_else(|_| Err(self.gone())),
            _ = tokio::time::sleep(timeout) => CallError::Timeout(timeout),
            _ = cancel.cancelled() => CallError::Cancelled,
        };
        self.forget(id);
        Err(abandoned)
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Queues a message for the writer task; one to a server whose input closed is dropped
    /// (its end is reported by the reader).
    fn send(&self, message: &Value) {
        let _ = self.outgoing.send(transport::frame(message));
    }

    /// Stops waiting for request `id` and tells the server it may drop it.
    fn forget(&self, id: u64) {
        let mut exchange = self
            .shared
            .exchange
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        exchange.pending.remove(&id);
        drop(exchange);
        self.notify("$/cancelRequest", json!({"id": id}));
    }

    fn gone(&self) -> CallError {
        CallError::Ended(
            self.ended()
                .unwrap_or_else(|| "the connection closed".into()),
        )
    }

    /// Makes the server's copy of `uri` read `text` (opening it, or replacing its content).
    /// Returns the document's version and the count of pushes so far, to wait for pushed
    /// diagnostics of this content.
    pub async fn sync(&self, uri: &str, language_id: &str, text: &str) -> (i32, u64) {
        let mut documents = self.documents.lock().await;
        let pushes = self.shared.pushes.load(Ordering::Acquire);
        documents.clock += 1;
        let now = documents.clock;
        match documents.open.get_mut(uri) {
            Some(document) if document.text == text => {
                document.used = now;
                (document.version, pushes)
            }
            Some(document) => {
                document.used = now;
                document.version += 1;
                document.text = text.to_owned();
                self.notify(
                    "textDocument/didChange",
                    json!({
                        "textDocument": {"uri": uri, "version": document.version},
                        "contentChanges": [{"text": text}],
                    }),
                );
                (document.version, pushes)
            }
            None => {
                self.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {
                        "uri": uri, "languageId": language_id, "version": 1, "text": text,
                    }}),
                );
                documents.open.insert(
                    uri.to_owned(),
                    Document {
                        version: 1,
                        text: text.to_owned(),
                        used: now,
                    },
                );
                self.close_least_used(&mut documents);
                (1, pushes)
            }
        }
    }

    fn close_least_used(&self, documents: &mut Documents) {
        while documents.open.len() > MAX_OPEN_DOCUMENTS {
            let Some(oldest) = documents
                .open
                .iter()
                .min_by_key(|(_, document)| document.used)
                .map(|(uri, _)| uri.clone())
            else {
                return;
            };
            documents.open.remove(&oldest);
            // A reopened document starts again at version 1: old pushes must not pass for it.
            let mut pushed = self.shared.pushed.lock().unwrap_or_else(|p| p.into_inner());
            pushed.remove(&oldest);
            drop(pushed);
            self.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": oldest}}),
            );
        }
    }

    /// The documents open in the server, with their content.
    pub async fn documents(&self) -> Vec<(String, String)> {
        let documents = self.documents.lock().await;
        documents
            .open
            .iter()
            .map(|(uri, document)| (uri.clone(), document.text.clone()))
            .collect()
    }

    /// Whether to ask for diagnostics (`textDocument/diagnostic`) rather than wait for pushes.
    pub fn pulls(&self) -> bool {
        self.pulls.load(Ordering::Acquire)
    }

    pub fn stop_pulling(&self) {
        tracing::info!(target: LOG_TARGET, server = %self.name, "no pull diagnostics; waiting for pushes");
        self.pulls.store(false, Ordering::Release);
    }

    /// Every document the server pushed diagnostics for.
    pub fn pushed(&self) -> HashMap<String, Published> {
        self.shared
            .pushed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn pushed_one(&self, uri: &str) -> Option<Published> {
        let pushed = self.shared.pushed.lock().unwrap_or_else(|p| p.into_inner());
        pushed.get(uri).cloned()
    }

    /// Waits until the server pushes diagnostics for `version` of `uri` (or, from a server
    /// that leaves versions out, any push after the `pushes`th).
    pub async fn pushed_for(
        &self,
        uri: &str,
        (version, pushes): (i32, u64),
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Reply {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.shared.changed.notified();
            let current = self.pushed_one(uri).filter(|published| {
                published
                    .version
                    .map_or(published.seq > pushes, |v| v >= i64::from(version))
            });
            if let Some(published) = current {
                return Ok(published.diagnostics);
            }
            if self.ended().is_some() {
                return Err(self.gone());
            }
            tokio::select! {
                _ = changed => {}
                _ = tokio::time::sleep_until(deadline) => return Err(CallError::Timeout(timeout)),
                _ = cancel.cancelled() => return Err(CallError::Cancelled),
            }
        }
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
    shared: Arc<Shared>,
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
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
        self.shared.end(reason);
    }

    fn dispatch(&self, message: Value) {
        let method = message.get("method").and_then(Value::as_str);
        match (method, message.get("id")) {
            (Some(method), Some(id)) => self.answer(id, method, message.get("params")),
            (Some(method), None) => self.notified(method, message.get("params")),
            (None, Some(id)) => self.resolve(id, &message),
            (None, None) => {}
        }
    }

    fn resolve(&self, id: &Value, message: &Value) {
        let Some(id) = id.as_u64() else { return };
        let waiter = {
            let mut exchange = self
                .shared
                .exchange
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            exchange.pending.remove(&id)
        };
        let Some(waiter) = waiter else { return };
        let reply = match message.get("error") {
            Some(error) => Err(CallError::Failed {
                code: error["code"].as_i64().unwrap_or(0),
                message: error["message"].as_str().unwrap_or("").to_owned(),
            }),
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        };
        let _ = waiter.send(reply);
    }

    /// Answers what servers ask of a client; anything else is "method not found".
    fn answer(&self, id: &Value, method: &str, params: Option<&Value>) {
        let result = match method {
            "workspace/configuration" => Ok(configuration(params)),
            "workspace/workspaceFolders" => Ok(self.folders.clone()),
            "client/registerCapability"
            | "client/unregisterCapability"
            | "window/workDoneProgress/create"
            | "window/showMessageRequest" => Ok(Value::Null),
            refresh if refresh.ends_with("/refresh") => Ok(Value::Null),
            _ => Err(
                json!({"code": METHOD_NOT_FOUND, "message": format!("{method} is not supported by Hearth")}),
            ),
        };
        let reply = match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        };
        let _ = self.outgoing.send(transport::frame(&reply));
    }

    fn notified(&self, method: &str, params: Option<&Value>) {
        let Some(params) = params else { return };
        if method == "textDocument/publishDiagnostics" {
            let Some(uri) = params["uri"].as_str() else {
                return;
            };
            let seq = self.shared.pushes.fetch_add(1, Ordering::AcqRel) + 1;
            let published = Published {
                version: params["version"].as_i64(),
                seq,
                diagnostics: params["diagnostics"].clone(),
            };
            let mut pushed = self.shared.pushed.lock().unwrap_or_else(|p| p.into_inner());
            pushed.insert(uri.to_owned(), published);
            drop(pushed);
            self.shared.changed.notify_waiters();
        }
    }
}

/// The answer to `workspace/configuration`: nothing for every section, but TypeScript's, whose
/// automatic type acquisition would otherwise run `npm install` into the user's cache.
fn configuration(params: Option<&Value>) -> Value {
    let items = params
        .and_then(|p| p["items"].as_array())
        .map(Vec::as_slice)
        .unwrap_or_default();
    items
        .iter()
        .map(|item| match item["section"].as_str() {
            Some("js/ts" | "typescript" | "javascript") => {
                json!({"tsserver": {"automaticTypeAcquisition": {"enabled": false}}})
            }
            Some("rust-analyzer") => super::spec::rust_analyzer_settings(),
            _ => Value::Null,
        })
        .collect()
}

fn folders(root: &Path) -> Value {
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| root.display().to_string());
    json!([{"uri": super::uri(root), "name": name}])
}

/// What Hearth tells a server it can do: full-text sync, pull and pushed diagnostics,
/// definitions (links too) and references, in UTF-16 positions only.
fn initialize_params(root: &Path, options: Option<Value>) -> Value {
    json!({
        "initializationOptions": options,
        // The server exits when Hearth's process does, even if Hearth could not stop it.
        "processId": std::process::id(),
        "clientInfo": {"name": "hearth", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": super::uri(root),
        "workspaceFolders": folders(root),
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
            "window": {"workDoneProgress": true}
        }
    })
}
