//! The domain's outcomes in the protocol's terms: turn errors and missing sessions as
//! JSON-RPC errors, stop reasons as ACP's. A provider's failure carries its category, reset
//! time, provider and status in `data` (`session_failure.rs`); a refused credential is
//! ACP's "authentication required" (-32000), so a client can offer to log in again.

use agent_client_protocol_schema::v1::StopReason as AcpStopReason;
use serde_json::json;

use crate::agent::rewind::RewindError;
use crate::agent::{StopReason, TurnError};
use crate::llm::Providers;
use crate::llm::category::Category;
use crate::rpc::RpcError;
use crate::rpc::error::{AUTH_REQUIRED, INTERNAL_ERROR};
use crate::session::actor::Unavailable;
use crate::session::failure::TurnFailure;

pub fn turn_error(error: TurnError) -> RpcError {
    match error {
        TurnError::Auth { provider } => {
            RpcError::auth_required(Providers::credential_hint(provider))
        }
        TurnError::Provider { provider, error } => {
            let failure = TurnFailure::of(provider, &error);
            let code = match failure.category {
                Category::Authentication => AUTH_REQUIRED,
                _ => INTERNAL_ERROR,
            };
            RpcError::new(code, format!("The model provider failed: {error}"))
                .with_data(super::session_failure::data(&failure))
        }
        TurnError::Store(e) => RpcError::internal(format!("cannot read the session log: {e}")),
        TurnError::Internal(message) => RpcError::internal(message),
    }
}

/// Why a rewind to `message_id` failed: an id that names no prompt is a bad param.
pub fn rewind_error(error: RewindError, message_id: &str) -> RpcError {
    match error {
        RewindError::UnknownMessage => RpcError::invalid_params(format!(
            "`toMessageId`: no prompt of this session has the id `{message_id}`"
        ))
        .with_data(json!({ "messageId": message_id })),
        RewindError::Store(e) => {
            RpcError::internal(format!("cannot read the session's checkpoints: {e}"))
        }
    }
}

/// Why a request naming `session_id` found no live session.
pub fn unavailable(why: &Unavailable, session_id: &str) -> RpcError {
    match why {
        Unavailable::NotFound => RpcError::session_not_found(session_id),
        Unavailable::Store(e) => RpcError::internal(format!("cannot read the session store: {e}")),
    }
}

pub fn stop_reason(stop: StopReason) -> AcpStopReason {
    match stop {
        StopReason::EndTurn => AcpStopReason::EndTurn,
        StopReason::MaxTokens => AcpStopReason::MaxTokens,
        StopReason::MaxTurnRequests => AcpStopReason::MaxTurnRequests,
        StopReason::Refusal => AcpStopReason::Refusal,
        StopReason::Cancelled => AcpStopReason::Cancelled,
    }
}
