//! A turn that failed at its model provider, told the user in the terms they can act on: the
//! failure's category (`llm/category.rs`), the provider's own message and, for a limit, when
//! it resets. The same description goes to the user (a `TurnFailed` event the turn emits
//! before the prompt's error answers, `agent/mod.rs`; the wire picks its form) and into the
//! error's `data` (`acp/session_failure.rs`), so the two never disagree.
//!
//! Tests: end to end in `core/tests/failures.rs`.

use std::time::SystemTime;

use crate::config::ProviderName;
use crate::ids::new_id;
use crate::llm::LlmError;
use crate::llm::category::Category;

/// A provider failure as the user is told it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnFailure {
    /// Names this failure for a client that tracks them (JetBrains' `sessionFailure.id`).
    pub id: String,
    pub category: Category,
    pub provider: ProviderName,
    pub status: Option<u16>,
    pub message: String,
    pub reset_at: Option<SystemTime>,
}

impl TurnFailure {
    pub fn of(provider: ProviderName, error: &LlmError) -> Self {
        TurnFailure {
            id: new_id("failure"),
            category: Category::of(error),
            provider,
            status: error.status,
            message: error.message.clone(),
            reset_at: error.reset_at,
        }
    }

    pub fn title(&self) -> &'static str {
        self.category.title()
    }

    /// The provider's message, when the limit resets, and what to do.
    pub fn description(&self) -> String {
        let status = self
            .status
            .map(|s| format!(" (HTTP {s})"))
            .unwrap_or_default();
        let reset = self
            .reset_rfc3339()
            .map(|at| format!(" It resets at {at}."))
            .unwrap_or_default();
        format!(
            "{}{status}: {}.{reset} {}",
            self.provider.as_str(),
            self.message.trim_end_matches('.'),
            self.category.advice()
        )
    }

    /// The reset time as the wire carries it (RFC 3339, UTC, to the second).
    pub fn reset_rfc3339(&self) -> Option<String> {
        self.reset_at
            .map(|at| humantime::format_rfc3339_seconds(at).to_string())
    }
}
