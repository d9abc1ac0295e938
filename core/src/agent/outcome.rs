//! How a turn ends: why it stopped, or why it could not go on. The protocol edge maps these to
//! its stop reasons and error codes (`acp/errors.rs`).

use crate::config::ProviderName;
use crate::llm::LlmError;
use crate::store::StoreError;

/// Why a turn stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    MaxTurnRequests,
    Refusal,
    Cancelled,
}

/// Why a turn failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnError {
    /// The model's provider has no credential; `provider` names it.
    Auth { provider: ProviderName },
    /// The provider failed before any output (after its retries).
    Provider {
        provider: ProviderName,
        error: LlmError,
    },
    /// The session's log could not be read.
    Store(String),
    /// A bug (a panicking turn).
    Internal(String),
}

impl From<StoreError> for TurnError {
    fn from(e: StoreError) -> Self {
        TurnError::Store(e.0)
    }
}
