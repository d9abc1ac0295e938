//! A turn's provider failure as an update (`session/failure.rs` says what it is): an error
//! `notice`, its figures in `_meta.hearth.failure` (the error's `data`), or — for a JetBrains
//! client that declared `sessionFailure` — a `session_info_update` carrying
//! `_meta.jetbrains.air.sessionFailure {id, revision, category, severity, title, details,
//! actions}`, the shape claude-agent-acp and codex-acp send JetBrains. AIR has fewer
//! categories than Hearth: rate limits and quotas are both `limit`.

use agent_client_protocol_schema::v1::{Notice, NoticeSeverity, SessionInfoUpdate, SessionUpdate};
use serde_json::{Value, json};

use crate::llm::category::Category;
use crate::session::failure::TurnFailure;

/// The update for `failure`; `air` picks JetBrains' form.
pub fn encode(failure: &TurnFailure, air: bool) -> Value {
    let update = if air {
        let meta = json!({ "jetbrains": { "air": { "sessionFailure": air_failure(failure) } } });
        SessionUpdate::SessionInfoUpdate(SessionInfoUpdate::new().meta(meta.as_object().cloned()))
    } else {
        let meta = json!({ "hearth": { "failure": data(failure) } });
        SessionUpdate::Notice(
            Notice::new(NoticeSeverity::Error, failure.title())
                .description(failure.description())
                .meta(meta.as_object().cloned()),
        )
    };
    serde_json::to_value(update).unwrap_or(Value::Null)
}

/// The figures of `failure` a client needs to act without parsing text: the prompt's error
/// `data` (`errors.rs`), and the notice's `_meta.hearth.failure`.
pub fn data(failure: &TurnFailure) -> Value {
    let mut data = json!({
        "category": failure.category.name(),
        "provider": failure.provider.as_str(),
        "status": failure.status,
        "message": failure.message,
    });
    if let Some(at) = failure.reset_rfc3339() {
        data["resetAt"] = json!(at);
    }
    data
}

fn air_failure(failure: &TurnFailure) -> Value {
    let (category, action) = match failure.category {
        Category::Authentication => ("access", "login"),
        Category::Quota | Category::RateLimit => ("limit", "retry"),
        Category::Overloaded => ("service", "retry"),
        Category::Rejected => ("request", "new_session"),
        Category::Transport => ("connection", "retry"),
        Category::Unknown => ("unknown", "retry"),
    };
    json!({
        "id": failure.id,
        "revision": 1,
        "category": category,
        "severity": "error",
        "title": failure.title(),
        "details": failure.description(),
        "actions": [action],
    })
}
