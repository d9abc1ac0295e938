//! How a turn ends: why it stopped, or why it could not go on. The protocol edge maps these to
//! its stop reasons and error codes (`acp/errors.rs`).

use crate::config::ProviderName;
use crate::llm::{LlmError, Usage};
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

/// How a turn that did not fail ended: why it stopped, and the tokens of its model requests
/// (`None` when it made none that reported any).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnEnd {
    pub stop: StopReason,
    pub usage: Option<Usage>,
}

impl TurnEnd {
    /// A turn that ended before asking the model anything.
    pub fn stopped(stop: StopReason) -> Self {
        TurnEnd { stop, usage: None }
    }
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
