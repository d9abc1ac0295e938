//! Requests to the ACP client on behalf of one session — what the client-backed I/O uses
//! for `fs/*` and `terminal/*`, and the turn loop for permission requests.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::engine::Shared;
use crate::io::{ClientAbilities, ClientRequests};
use crate::rpc::RpcError;

pub struct SessionClient {
    pub shared: Arc<Shared>,
    pub session_id: Arc<str>,
    /// The running turn's token: cancelling the turn withdraws pending file requests
    /// (`$/cancel_request`), whatever token the caller passed.
    pub turn: CancellationToken,
}

impl ClientRequests for SessionClient {
    fn session_id(&self) -> &str {
        &self.session_id
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            let shared = &self.shared;
            let token = match method {
                // File requests die with the turn, whatever the caller passed.
                m if m.starts_with("fs/") => self.turn.child_token(),
                // Never withdrawn: the client may already have started the command, and only
                // a terminal id we hold can be killed and released.
                "terminal/create" => {
                    let never = CancellationToken::new();
                    return shared
                        .outgoing
                        .request(&shared.outbox, method, params, &never)
                        .await;
                }
                // Other terminal requests (kill, release after a cancel) follow the caller.
                _ => CancellationToken::new(),
            };
            let request = shared
                .outgoing
                .request(&shared.outbox, method, params, &token);
            tokio::pin!(request);
            tokio::select! {
                answer = &mut request => answer,
                () = cancel.cancelled() => {
                    token.cancel();
                    request.await
                }
            }
        })
    }
}

/// What the client advertised in `initialize`.
pub fn abilities(shared: &Shared) -> ClientAbilities {
    shared
        .client
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .abilities
}
