//! Requests the engine sends *to* the client, and the tasks waiting for their answers.
//!
//! Ids are the engine's own sequence (ids are per direction, so they may collide with the
//! client's). A response — result or error — is routed to the waiting task; a response to
//! an id we never sent is ignored. Cancelling the wait sends `$/cancel_request`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::envelope::{notification_frame, request_frame};
use super::error::RpcError;
use crate::outbox::Outbox;

type Pending = oneshot::Sender<Result<Value, RpcError>>;

// The first caller is the permission flow of the tools issue; until then only tests call it.
#[cfg_attr(not(test), allow(dead_code))]
pub struct Outgoing {
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, Pending>>,
}

impl Default for Outgoing {
    fn default() -> Self {
        Outgoing {
            next_id: AtomicU64::new(0),
            pending: Mutex::new(HashMap::new()),
        }
    }
}

#[cfg_attr(not(test), allow(dead_code))]
impl Outgoing {
    /// Sends `method` to the client and waits for its answer. If `cancel` fires first, the
    /// client is told with `$/cancel_request` and the call returns `-32800` at once; the late
    /// answer, when it comes, is dropped.
    pub async fn request(
        &self,
        outbox: &Outbox,
        method: &str,
        params: Value,
        cancel: &CancellationToken,
    ) -> Result<Value, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id, tx);
        outbox.frame(request_frame(&json!(id), method, &params));
        tokio::select! {
            answer = rx => answer.unwrap_or_else(|_| Err(RpcError::cancelled())),
            () = cancel.cancelled() => {
                outbox.frame(notification_frame("$/cancel_request", &json!({ "requestId": id })));
                Err(RpcError::cancelled())
            }
        }
    }

    /// Routes a client response. Returns false when no request with that id is waiting.
    pub fn resolve(&self, id: &Value, outcome: Result<Value, RpcError>) -> bool {
        let Some(id) = id.as_u64() else { return false };
        match self.lock().remove(&id) {
            Some(waiting) => {
                let _ = waiting.send(outcome);
                true
            }
            None => false,
        }
    }

    /// Answers every waiting task with `-32800` (engine shutdown).
    pub fn cancel_all(&self) {
        for (_, waiting) in self.lock().drain() {
            let _ = waiting.send(Err(RpcError::cancelled()));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Pending>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}
