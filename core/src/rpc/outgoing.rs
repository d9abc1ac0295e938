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
                outbox.frame(notification_frame("$/cancel_request", json!({ "requestId": id })));
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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex, mpsc};
    use std::time::Duration;

    use super::*;
    use crate::config::StoreLocation;
    use crate::outbox::Host;
    use crate::rpc::error::REQUEST_CANCELLED;
    use crate::store::Store;

    struct Frames(Mutex<mpsc::Sender<Value>>);

    impl Host for Frames {
        fn deliver(&self, frame: &str) {
            let _ = self
                .0
                .lock()
                .unwrap()
                .send(serde_json::from_str(frame).unwrap());
        }
    }

    fn setup() -> (
        Arc<Outgoing>,
        Outbox,
        mpsc::Receiver<Value>,
        tokio::runtime::Runtime,
    ) {
        let (tx, rx) = mpsc::channel();
        let store = Arc::new(Store::open(&StoreLocation::Memory).unwrap());
        let outbox = Outbox::new(Arc::new(Frames(Mutex::new(tx))));
        outbox.start(store).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        (Arc::new(Outgoing::default()), outbox, rx, runtime)
    }

    fn next(rx: &mpsc::Receiver<Value>) -> Value {
        rx.recv_timeout(Duration::from_secs(5)).unwrap()
    }

    #[test]
    fn results_and_errors_reach_the_waiting_task_by_id() {
        let (outgoing, outbox, rx, runtime) = setup();
        let never = CancellationToken::new();
        let (o, b, t) = (outgoing.clone(), outbox.clone(), never.clone());
        let first = runtime.spawn(async move {
            o.request(&b, "fs/read_text_file", json!({"path": "/a"}), &t)
                .await
        });
        let (o, b, t) = (outgoing.clone(), outbox.clone(), never.clone());
        let second =
            runtime.spawn(async move { o.request(&b, "terminal/create", json!({}), &t).await });
        let requests = [next(&rx), next(&rx)];
        let id_of =
            |method: &str| requests.iter().find(|r| r["method"] == method).unwrap()["id"].clone();
        assert_ne!(
            id_of("fs/read_text_file"),
            id_of("terminal/create"),
            "ids are allocated per request"
        );
        // Answer out of order: each answer finds its own waiter.
        assert!(outgoing.resolve(
            &id_of("terminal/create"),
            Err(RpcError::new(-32001, "no terminal"))
        ));
        assert!(outgoing.resolve(&id_of("fs/read_text_file"), Ok(json!({"content": "A"}))));
        assert!(
            !outgoing.resolve(&json!(9999), Ok(json!({}))),
            "an unknown id is not routed"
        );
        assert_eq!(
            runtime.block_on(first).unwrap(),
            Ok(json!({"content": "A"}))
        );
        assert_eq!(
            runtime.block_on(second).unwrap().unwrap_err().message,
            "no terminal"
        );
    }

    #[test]
    fn cancelling_a_wait_tells_the_client_and_drops_the_late_answer() {
        let (outgoing, outbox, rx, runtime) = setup();
        let cancel = CancellationToken::new();
        let (o, b, t) = (outgoing.clone(), outbox.clone(), cancel.clone());
        let waiting = runtime.spawn(async move {
            o.request(&b, "session/request_permission", json!({}), &t)
                .await
        });
        let request = next(&rx);
        cancel.cancel();
        let outcome = runtime.block_on(waiting).unwrap();
        assert_eq!(outcome.unwrap_err().code, REQUEST_CANCELLED);
        let notice = next(&rx);
        assert_eq!(notice["method"], "$/cancel_request");
        assert_eq!(notice["params"]["requestId"], request["id"]);
        assert!(
            outgoing.resolve(&request["id"], Ok(json!({}))),
            "the late answer is consumed quietly"
        );
    }

    #[test]
    fn shutdown_answers_every_waiter() {
        let (outgoing, outbox, rx, runtime) = setup();
        let never = CancellationToken::new();
        let (o, b) = (outgoing.clone(), outbox.clone());
        let waiting = runtime
            .spawn(async move { o.request(&b, "fs/read_text_file", json!({}), &never).await });
        next(&rx);
        outgoing.cancel_all();
        assert_eq!(
            runtime.block_on(waiting).unwrap().unwrap_err().code,
            REQUEST_CANCELLED
        );
    }
}
