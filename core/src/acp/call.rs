//! A client request being served: its id, its cancellation token, and the promise that it
//! is answered exactly once — `Drop` answers for a handler that panicked or was torn down.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use crate::engine::Shared;
use crate::rpc::{RequestId, RpcError};

pub struct Call {
    shared: Arc<Shared>,
    id: Option<RequestId>,
    pub token: CancellationToken,
}

impl Call {
    pub fn new(shared: Arc<Shared>, id: RequestId, token: CancellationToken) -> Self {
        Call {
            shared,
            id: Some(id),
            token,
        }
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    pub fn respond(mut self, outcome: Result<Value, RpcError>) {
        self.finish(outcome);
    }

    /// Answers with the serialized `result`.
    pub fn reply<T: serde::Serialize>(self, result: Result<T, RpcError>) {
        let outcome = result.and_then(|r| {
            serde_json::to_value(r)
                .map_err(|e| RpcError::internal(format!("cannot serialize the result: {e}")))
        });
        self.respond(outcome);
    }

    /// Answers with a result already in wire form.
    pub fn reply_raw(mut self, result: &RawValue) {
        if let Some(id) = self.id.take() {
            self.shared.inflight.end(&id);
            let frame = crate::rpc::envelope::raw_result_frame(&id, result);
            self.shared.outbox.frame(frame);
        }
    }

    /// Queues a store write whose commit must precede the answer.
    pub fn respond_after(mut self, op: crate::store::StoreOp, outcome: Result<Value, RpcError>) {
        if let Some(id) = self.id.take() {
            self.shared.inflight.end(&id);
            let frame = crate::rpc::envelope::response_frame(&id, &outcome);
            self.shared.outbox.write(op, Some(frame));
        }
    }

    fn finish(&mut self, outcome: Result<Value, RpcError>) {
        if let Some(id) = self.id.take() {
            self.shared.inflight.end(&id);
            self.shared.respond(&id, outcome);
        }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if self.id.is_none() {
            return;
        }
        let error = if self.shared.is_closed() {
            RpcError::cancelled()
        } else {
            tracing::error!("a request handler ended without answering (panic?)");
            RpcError::internal("the request handler failed unexpectedly")
        };
        self.finish(Err(error));
    }
}

/// Parses params into the ACP type; the error names the offending field.
///
/// Valid params, the common case, are read once, straight from the text. Bad ones are read
/// again as a tree to explain the error: the field path says where the problem is, and no
/// text position (it would count from the start of `params`, not of the frame).
pub fn params<T: DeserializeOwned>(params: &RawValue) -> Result<T, RpcError> {
    serde_json::from_str(params.get()).or_else(|_| {
        let invalid = |e: &dyn std::fmt::Display| RpcError::invalid_params(e.to_string());
        let tree: Value = serde_json::from_str(params.get()).map_err(|e| invalid(&e))?;
        crate::json_path::from_value(tree).map_err(|e| invalid(&e))
    })
}
