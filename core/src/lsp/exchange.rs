//! The JSON-RPC exchange with a language server: requests numbered and matched with their
//! answers, notifications, frames queued for the writer task, and the end of the connection,
//! which fails every request still waiting.
//!
//! Tests: `tools/lsp/tests.rs` (against `tests/lsp/fake_server.py`: hangs, crashes, timeouts),
//! `core/tests/lsp.rs` (the real servers).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::futures::Notified;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::transport;

/// JSON-RPC's "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;
/// LSP's `ServerCancelled`: the server dropped the request (rust-analyzer, when its project
/// finished loading under it) and asks for it again (`retriggerRequest`).
pub const SERVER_CANCELLED: i64 = -32802;

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
    /// The server was still loading its project when the time was up (`readiness.rs`).
    Loading(Duration),
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
            CallError::Loading(limit) => write!(
                f,
                "the server was still loading the project after {} s (`lsp.startupTimeoutSecs`); ask again in a while",
                limit.as_secs()
            ),
        }
    }
}

pub type Reply = Result<Value, CallError>;

pub struct Exchange {
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
    next_id: AtomicU64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    pending: HashMap<u64, oneshot::Sender<Reply>>,
    /// Why the connection ended, once it has.
    ended: Option<String>,
}

impl Exchange {
    /// An exchange whose frames go to `outgoing` (the writer task's queue).
    pub fn new(outgoing: mpsc::UnboundedSender<Vec<u8>>) -> Self {
        Exchange {
            outgoing,
            next_id: AtomicU64::new(1),
            state: Mutex::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends a request and waits for its answer, at most `timeout`, or until `cancel`.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Reply {
        let id = self.next_id();
        let (waiter, answer) = oneshot::channel();
        {
            let mut state = self.state();
            if let Some(reason) = &state.ended {
                return Err(CallError::Ended(reason.clone()));
            }
            state.pending.insert(id, waiter);
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

    /// The id of a request sent without waiting for its answer.
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Queues a message for the writer task; one to a server whose input closed is dropped
    /// (its end is reported by the reader).
    pub fn send(&self, message: &Value) {
        let _ = self.outgoing.send(transport::frame(message));
    }

    /// Stops waiting for request `id` and tells the server it may drop it.
    fn forget(&self, id: u64) {
        self.state().pending.remove(&id);
        self.notify("$/cancelRequest", json!({"id": id}));
    }

    /// Hands the answer `message` to the request `id` waiting for it.
    pub fn resolve(&self, id: &Value, message: &Value) {
        let Some(id) = id.as_u64() else { return };
        let Some(waiter) = self.state().pending.remove(&id) else {
            return;
        };
        let reply = match message.get("error") {
            Some(error) => Err(CallError::Failed {
                code: error["code"].as_i64().unwrap_or(0),
                message: error["message"].as_str().unwrap_or("").to_owned(),
            }),
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        };
        let _ = waiter.send(reply);
    }

    /// The connection ended for `reason`: every waiting request fails with it.
    pub fn end(&self, reason: String) {
        let pending = {
            let mut state = self.state();
            state.ended.get_or_insert(reason.clone());
            std::mem::take(&mut state.pending)
        };
        for (_, waiter) in pending {
            let _ = waiter.send(Err(CallError::Ended(reason.clone())));
        }
    }

    /// Why the connection ended, if it has.
    pub fn ended(&self) -> Option<String> {
        self.state().ended.clone()
    }

    /// The error of a request to an ended connection.
    pub fn gone(&self) -> CallError {
        CallError::Ended(
            self.ended()
                .unwrap_or_else(|| "the connection closed".into()),
        )
    }
}

/// Waits for `changed` (a `Notify`'s, taken before the caller's last look at its state), at
/// most until `deadline` (then `late`), or until `cancel`: the step of every wait for news
/// from a server.
pub async fn until_changed(
    changed: Notified<'_>,
    deadline: Instant,
    late: CallError,
    cancel: &CancellationToken,
) -> Result<(), CallError> {
    tokio::select! {
        _ = changed => Ok(()),
        _ = tokio::time::sleep_until(deadline) => Err(late),
        _ = cancel.cancelled() => Err(CallError::Cancelled),
    }
}
