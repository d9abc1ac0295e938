//! A client request being served: its id, its cancellation token, and the promise that it
//! is answered exactly once — `Drop` answers for a handler that panicked or was torn down.
//! It never leaves `acp/`: the domain resolves typed outcomes, and the handler answers.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::Edge;
use crate::context::EngineContext;
use crate::rpc::envelope;
use crate::rpc::{RequestId, RpcError};

pub struct Responder {
    edge: Arc<Edge>,
    id: Option<RequestId>,
    /// Fired by `$/cancel_request` for this request (and by engine shutdown).
    pub token: CancellationToken,
}

impl Responder {
    pub fn new(edge: Arc<Edge>, id: RequestId, token: CancellationToken) -> Self {
        Responder {
            edge,
            id: Some(id),
            token,
        }
    }

    pub fn edge(&self) -> &Arc<Edge> {
        &self.edge
    }

    pub fn ctx(&self) -> &Arc<EngineContext> {
        &self.edge.ctx
    }

    pub fn respond(mut self, outcome: Result<Value, RpcError>) {
        self.finish(outcome);
    }

    /// Answers with the serialized `result`.
    /// Written straight to text, with no JSON tree in between: a `session/list` page of 50
    /// sessions is the largest answer served on the caller's thread.
    pub fn reply<T: serde::Serialize>(self, result: Result<T, RpcError>) {
        match result.map(|r| serde_json::value::to_raw_value(&r)) {
            Ok(Ok(raw)) => self.reply_raw(&raw),
            Ok(Err(e)) => self.respond(Err(RpcError::internal(format!(
                "cannot serialize the result: {e}"
            )))),
            Err(e) => self.respond(Err(e)),
        }
    }

    /// Answers with a result already in wire form.
    pub fn reply_raw(mut self, result: &RawValue) {
        if let Some(id) = self.id.take() {
            self.edge.inflight.end(&id);
            self.edge
                .ctx
                .send_frame(envelope::raw_result_frame(&id, result));
        }
    }

    fn finish(&mut self, outcome: Result<Value, RpcError>) {
        if let Some(id) = self.id.take() {
            self.edge.inflight.end(&id);
            self.edge
                .ctx
                .send_frame(envelope::response_frame(&id, &outcome));
        }
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        if self.id.is_none() {
            return;
        }
        let error = if self.edge.ctx.is_closed() {
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
