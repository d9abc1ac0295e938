//! What kind of failure a provider error is, once the retries (`retry.rs`) have given up: the
//! category a client shows (and acts on: log in again, wait for the reset, start over), read
//! from the HTTP status, the provider's error type and, where those are ambiguous (a 429 that
//! is an exhausted quota, a 400 that is an empty credit balance), its message.
//!
//! Tests: inline; end to end in `core/tests/failures.rs`.

use super::LlmError;

/// The kinds of provider failure a user can tell apart and act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// The key is missing, wrong or lacks the permission (401, 403).
    Authentication,
    /// The account's quota, credit or billing is exhausted (402; a 429 or 400 saying so).
    Quota,
    /// Too many requests for now (429); the reset time comes with it when the provider says.
    RateLimit,
    /// The provider is overloaded or unavailable (529, 503, an `overloaded_error`).
    Overloaded,
    /// The provider refused this request as it is (400, 404, 413, 422).
    Rejected,
    /// The provider could not be reached, or the connection broke.
    Transport,
    Unknown,
}

/// Words in a provider's error type or message that mean money, not speed.
const QUOTA_WORDS: &[&str] = &[
    "insufficient_quota",
    "quota",
    "billing",
    "credit balance",
    "credits",
    "payment",
];

impl Category {
    /// The category of `error`, the last attempt's.
    pub fn of(error: &LlmError) -> Category {
        let code = error.code.as_deref().unwrap_or_default();
        let text = format!("{code} {}", error.message).to_lowercase();
        let says_quota = QUOTA_WORDS.iter().any(|w| text.contains(w));
        match (error.status, code) {
            (Some(402), _) => Category::Quota,
            (Some(401 | 403), _) | (_, "authentication_error" | "permission_error") => {
                Category::Authentication
            }
            (Some(429 | 400), _) if says_quota => Category::Quota,
            (Some(429), _) | (_, "rate_limit_error") => Category::RateLimit,
            (Some(503 | 529), _) | (_, "overloaded_error") => Category::Overloaded,
            (Some(400 | 404 | 413 | 422), _) | (_, "invalid_request_error") => Category::Rejected,
            (None, "") => Category::Transport,
            _ => Category::Unknown,
        }
    }

    /// The name on the wire (`data.category` of a failed prompt).
    pub fn name(self) -> &'static str {
        match self {
            Category::Authentication => "authentication",
            Category::Quota => "quota",
            Category::RateLimit => "rate_limit",
            Category::Overloaded => "overloaded",
            Category::Rejected => "request_rejected",
            Category::Transport => "transport",
            Category::Unknown => "unknown",
        }
    }

    /// What the user is told, in a few words.
    pub fn title(self) -> &'static str {
        match self {
            Category::Authentication => "The model provider refused the credentials",
            Category::Quota => "The model provider's quota is used up",
            Category::RateLimit => "The model provider's rate limit was reached",
            Category::Overloaded => "The model provider is overloaded",
            Category::Rejected => "The model provider rejected the request",
            Category::Transport => "The connection to the model provider failed",
            Category::Unknown => "The model provider failed",
        }
    }

    /// What the user can do about it.
    pub fn advice(self) -> &'static str {
        match self {
            Category::Authentication => {
                "Check the API key (`hearth auth`), then send the prompt again."
            }
            Category::Quota => "Check the account's plan and billing, then send the prompt again.",
            Category::RateLimit => "Wait for the limit to reset, then send the prompt again.",
            Category::Overloaded | Category::Transport | Category::Unknown => {
                "Send the prompt again in a moment."
            }
            Category::Rejected => {
                "Change the prompt, or start a new session if the conversation itself is refused."
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(status: Option<u16>, code: &str, message: &str) -> LlmError {
        LlmError {
            message: message.into(),
            status,
            code: (!code.is_empty()).then(|| code.to_string()),
            ..LlmError::default()
        }
    }

    #[test]
    fn statuses_codes_and_messages_give_the_category() {
        for (status, code, message, category) in [
            (Some(401), "", "invalid x-api-key", Category::Authentication),
            (
                Some(403),
                "permission_error",
                "no",
                Category::Authentication,
            ),
            (Some(402), "", "pay up", Category::Quota),
            (
                Some(429),
                "insufficient_quota",
                "You exceeded your current quota",
                Category::Quota,
            ),
            (
                Some(400),
                "invalid_request_error",
                "Your credit balance is too low",
                Category::Quota,
            ),
            (
                Some(429),
                "rate_limit_exceeded",
                "slow down",
                Category::RateLimit,
            ),
            (None, "rate_limit_error", "slow down", Category::RateLimit),
            (Some(529), "", "Overloaded", Category::Overloaded),
            (Some(503), "", "unavailable", Category::Overloaded),
            (None, "overloaded_error", "Overloaded", Category::Overloaded),
            (Some(400), "", "max_tokens: too large", Category::Rejected),
            (Some(413), "", "too big", Category::Rejected),
            (Some(422), "", "bad field", Category::Rejected),
            (
                None,
                "",
                "cannot reach the model: refused",
                Category::Transport,
            ),
            (Some(500), "", "oops", Category::Unknown),
            (None, "api_error", "internal", Category::Unknown),
        ] {
            assert_eq!(
                Category::of(&error(status, code, message)),
                category,
                "{status:?} {code} {message}"
            );
        }
    }
}
